//! md RAID-0 on the full host (`[md]`; the geometry is `config/md.rs`'s): a request on the volume `md0` goes
//! through md's pass (`md_submit_bio` → `raid0_make_request`, `block.md_submit_ns` per piece) before blk-mq.
//! Within one chunk it is remapped to its member drive and goes on as any request of that drive; across chunks
//! it is split at the chunk boundaries (`bio_split`, chained to the original with `bio_chain`) and each piece
//! goes down to its member, the request completing with its last piece. A flush goes to every member
//! (`md_flush_request` sends an empty flush to each) and completes when all have.

use super::*;
use crate::config::md::Piece;

impl FullHost {
    /// md's pass over `req`, on the md volume, from `at` on `core`. Returns when the submitting core is done
    /// and whether md submitted it (split over members); if not, `req` now names its member drive and offset,
    /// and the caller submits it as any request from the time returned.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn md_submit(
        &mut self,
        q: &mut impl HostQueue,
        requests: &mut RequestArena,
        devices: &mut [Device],
        req: ReqId,
        core: u32,
        at: Time,
    ) -> (Time, bool) {
        let md = self.md.as_ref().expect("checked: a flow on md0 has an [md] volume");
        let mut pieces = std::mem::take(&mut self.md_pieces);
        pieces.clear();
        let r = &requests[req];
        if r.op == Op::Flush {
            pieces.extend(md.members().iter().map(|&drive| Piece { drive, offset: 0, len: 0 }));
        } else {
            pieces.extend(md.pieces(r.offset, u64::from(r.len)));
        }
        let md_ns = self.costs.md_submit_ns;
        let mut t = at + md_ns;
        if let [only] = pieces[..] {
            let r = &mut requests[req];
            (r.drive, r.offset) = (only.drive, only.offset);
            self.md_pieces = pieces;
            return (t, false);
        }
        self.reqs[req.index()].pieces_left = pieces.len() as u32;
        let base = self.reqs[req.index()];
        for (i, piece) in pieces.iter().enumerate() {
            if i > 0 {
                t += md_ns;
            }
            let parent = &requests[req];
            let child = Request {
                drive: piece.drive,
                offset: piece.offset,
                len: piece.len as u32,
                stamps: Stamps { issued: parent.stamps.issued, block_entered: t, ..Stamps::default() },
                ..parent.clone()
            };
            let id = requests.insert(child);
            *self.req_mut(id) = HostReq {
                parent: req.0,
                pieces_left: 0,
                riders: NO_PARENT,
                next_rider: NO_PARENT,
                hazard_merged: None,
                ..base
            };
            t = self.submit_to_block(q, requests, devices, id, core, t);
        }
        self.md_pieces = pieces;
        (t, true)
    }
}
