//! A slab: values stored by small integer ids that are reused after removal, so memory follows the number
//! alive rather than the number ever created, and steady state allocates nothing.

use std::marker::PhantomData;

/// An id type a slab hands out.
pub trait SlabId: Copy {
    fn from_index(index: u32) -> Self;
    fn index(self) -> usize;
}

impl SlabId for u32 {
    fn from_index(index: u32) -> Self {
        index
    }
    fn index(self) -> usize {
        self as usize
    }
}

#[derive(Debug)]
pub struct Slab<T, Id = u32> {
    slots: Vec<T>,
    in_use: Vec<bool>,
    free: Vec<u32>,
    live: usize,
    _id: PhantomData<Id>,
}

impl<T, Id> Default for Slab<T, Id> {
    fn default() -> Self {
        Slab { slots: Vec::new(), in_use: Vec::new(), free: Vec::new(), live: 0, _id: PhantomData }
    }
}

impl<T, Id: SlabId> Slab<T, Id> {
    pub fn insert(&mut self, value: T) -> Id {
        self.live += 1;
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = value;
                self.in_use[i as usize] = true;
                Id::from_index(i)
            }
            None => {
                self.slots.push(value);
                self.in_use.push(true);
                Id::from_index((self.slots.len() - 1) as u32)
            }
        }
    }

    /// Release `id`'s slot. Releasing a slot twice is a model bug and panics.
    pub fn remove(&mut self, id: Id) {
        assert!(std::mem::replace(&mut self.in_use[id.index()], false), "slab slot {} released twice", id.index());
        self.live -= 1;
        self.free.push(id.index() as u32);
    }

    /// Values alive.
    pub fn live(&self) -> usize {
        self.live
    }

    /// The values alive, in slot order.
    pub fn iter_live(&self) -> impl Iterator<Item = &T> {
        self.iter_live_ids().map(|(_, v)| v)
    }

    /// The values alive with their ids, in slot order.
    pub fn iter_live_ids(&self) -> impl Iterator<Item = (Id, &T)> {
        let live = self.slots.iter().zip(&self.in_use).enumerate().filter(|(_, (_, &used))| used);
        live.map(|(i, (v, _))| (Id::from_index(i as u32), v))
    }
}

impl<T, Id: SlabId> std::ops::Index<Id> for Slab<T, Id> {
    type Output = T;
    fn index(&self, id: Id) -> &T {
        &self.slots[id.index()]
    }
}

impl<T, Id: SlabId> std::ops::IndexMut<Id> for Slab<T, Id> {
    fn index_mut(&mut self, id: Id) -> &mut T {
        &mut self.slots[id.index()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reuses_ids_and_tracks_live_values() {
        let mut s: Slab<&str> = Slab::default();
        let a = s.insert("a");
        let b = s.insert("b");
        s.remove(a);
        let c = s.insert("c");
        assert_eq!(c, a, "freed id reused");
        assert_eq!(s.live(), 2);
        assert_eq!(s.iter_live().copied().collect::<Vec<_>>(), vec!["c", "b"]);
        assert_eq!(s[b], "b");
    }

    #[test]
    #[should_panic(expected = "released twice")]
    fn double_release_panics() {
        let mut s: Slab<u8> = Slab::default();
        let a = s.insert(1);
        s.remove(a);
        s.remove(a);
    }
}
