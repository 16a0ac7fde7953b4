//! Keys whose value is one of a few words (`rw = "randread"`, `class = "critical"`, `format = "msr"`): enums
//! that derive serde's traits. A value of another type or an unknown word gets one message naming the value
//! found and every word accepted, e.g. `found 0 (an integer), expected one of "read", "write", ...`; serde's own
//! message for a wrong type through the toml deserializer ("invalid type: unit variant, expected string
//! only") names neither.
//!
//! An enum opts in by deriving with `#[serde(remote = "Self")]`, which turns the derived code into inherent
//! functions, and listing itself in [`keyword_serde!`], which implements the traits around them.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};

use crate::util::quote::{quoted, QUOTED_CHARS};

/// Implements `Serialize` and `Deserialize` for enums that derive both with `#[serde(remote = "Self")]`:
/// serialization is the derived one; deserialization takes only one of the enum's words (its variants'
/// names and aliases, as the derive spells them), with [`word`]'s messages otherwise.
macro_rules! keyword_serde {
    ($($keyword:ty),+ $(,)?) => {$(
        impl serde::Serialize for $keyword {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                <$keyword>::serialize(self, serializer)
            }
        }

        impl<'de> serde::Deserialize<'de> for $keyword {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let words = $crate::util::keyword::words(<$keyword>::deserialize);
                let word = $crate::util::keyword::word(deserializer, words)?;
                <$keyword>::deserialize(serde::de::IntoDeserializer::<D::Error>::into_deserializer(word))
            }
        }
    )+};
}
pub(crate) use keyword_serde;

/// The words a derived enum accepts: the list its derived `deserialize` hands to `deserialize_enum`.
pub fn words<T>(derived: fn(WordsProbe) -> Result<T, Probed>) -> &'static [&'static str] {
    match derived(WordsProbe) {
        Err(Probed(Some(words))) => words,
        // Not a derived enum: nothing is accepted (and the unit tests of every keyword say so).
        _ => &[],
    }
}

/// The value of a keyword key, which must be one of `words`.
pub fn word<'de, D: Deserializer<'de>>(deserializer: D, words: &'static [&'static str]) -> Result<String, D::Error> {
    let word = deserializer.deserialize_any(WordVisitor { words })?;
    if words.contains(&word.as_str()) {
        Ok(word)
    } else {
        Err(de::Error::custom(format!("found {}, expected {}", quoted(&word, QUOTED_CHARS), OneOf(words))))
    }
}

/// "one of "a", "b", "c"".
struct OneOf(&'static [&'static str]);

impl fmt::Display for OneOf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("one of ")?;
        for (i, word) in self.0.iter().enumerate() {
            write!(f, "{}{word:?}", if i == 0 { "" } else { ", " })?;
        }
        Ok(())
    }
}

/// Takes a string; any other value is an error naming it and the words.
struct WordVisitor {
    words: &'static [&'static str],
}

impl WordVisitor {
    fn found<E: de::Error>(&self, what: fmt::Arguments) -> E {
        E::custom(format!("found {what}, expected {}", OneOf(self.words)))
    }
}

impl<'de> Visitor<'de> for WordVisitor {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}", OneOf(self.words))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
        Ok(v.to_owned())
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<String, E> {
        Err(self.found(format_args!("{v} (a boolean)")))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<String, E> {
        Err(self.found(format_args!("{v} (an integer)")))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<String, E> {
        Err(self.found(format_args!("{v} (an integer)")))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<String, E> {
        Err(self.found(format_args!("{v} (a float)")))
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, _: A) -> Result<String, A::Error> {
        Err(self.found(format_args!("an array")))
    }
    fn visit_map<A: de::MapAccess<'de>>(self, _: A) -> Result<String, A::Error> {
        Err(self.found(format_args!("a table")))
    }
}

/// A deserializer that only records the words a derived enum would accept.
pub struct WordsProbe;

/// What [`WordsProbe`] ends with: the words, if an enum asked for them.
#[derive(Debug)]
pub struct Probed(Option<&'static [&'static str]>);

impl fmt::Display for Probed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("probed for an enum's words")
    }
}

impl std::error::Error for Probed {}

impl de::Error for Probed {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Probed(None)
    }
}

impl<'de> Deserializer<'de> for WordsProbe {
    type Error = Probed;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Probed> {
        Err(Probed(None))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Probed> {
        Err(Probed(Some(variants)))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
        unit_struct newtype_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::device::{BufferSharing, MappingKind, Precondition, Stage3Wait};
    use crate::config::host::HostModel;
    use crate::config::scenario::{CpusAllowedPolicy, IoEngine, IoPrioClass, RateProcess, RwMode};
    use crate::request::{Criticality, NvmePriority};
    use crate::workload::trace::TraceFormat;

    #[test]
    fn every_keyword_enum_knows_its_words() {
        let lists = [
            words(RwMode::deserialize),
            words(RateProcess::deserialize),
            words(IoEngine::deserialize),
            words(IoPrioClass::deserialize),
            words(CpusAllowedPolicy::deserialize),
            words(BufferSharing::deserialize),
            words(Stage3Wait::deserialize),
            words(MappingKind::deserialize),
            words(Precondition::deserialize),
            words(Criticality::deserialize),
            words(NvmePriority::deserialize),
            words(TraceFormat::deserialize),
            words(HostModel::deserialize),
        ];
        assert!(lists.iter().all(|words| words.len() >= 2), "{lists:?}");
        // Aliases are words too.
        assert_eq!(lists[0], ["read", "write", "randread", "randwrite", "readwrite", "rw", "randrw"]);
    }

    #[test]
    fn keywords_read_and_write_as_the_derive_spells_them() {
        assert_eq!(serde_json::to_string(&IoEngine::IoUring).unwrap(), "\"io_uring\"");
        assert_eq!(serde_json::from_str::<IoEngine>("\"io_uring\"").unwrap(), IoEngine::IoUring);
        assert_eq!(serde_json::from_str::<RwMode>("\"readwrite\"").unwrap(), RwMode::Rw);
        assert_eq!(serde_json::to_string(&MappingKind::InPlace).unwrap(), "\"in-place\"");
        let message = serde_json::from_str::<Criticality>("7").unwrap_err().to_string();
        assert!(message.starts_with(r#"found 7 (an integer), expected one of "critical", "normal""#), "{message}");
        let message = serde_json::from_str::<Criticality>(&format!("\"{}\"", "x".repeat(500))).unwrap_err();
        assert!(message.to_string().len() < 200, "{message}");
    }
}
