//! States as fixed-size bytes, for the part of the frontier kept on disk.
//!
//! Decoding builds every struct with all its fields named, so a field added
//! to the state fails to compile here instead of being silently dropped; a
//! test round-trips every reachable state of a config with faults, moves,
//! an rf increase and a handoff.

use crate::state::*;
use crate::types::*;

/// Bytes per encoded state.
pub(super) const STATE_BYTES: usize =
    NODES_MAX * 29 + 38 + 27 + 9 * CLIENTS_MAX + 1 + 6 * crate::net::NET_MAX;

/// Writes at a running offset into an array of fixed size: inlined into
/// `encode`, every offset is a constant, so no write is bounds-checked at
/// run time.
struct Writer<'a> {
    out: &'a mut [u8; STATE_BYTES],
    at: usize,
}

impl Writer<'_> {
    #[inline(always)]
    fn u8(&mut self, b: u8) {
        self.out[self.at] = b;
        self.at += 1;
    }
    #[inline(always)]
    fn bool(&mut self, b: bool) {
        self.u8(b as u8);
    }
    #[inline(always)]
    fn u16(&mut self, x: u16) {
        x.to_le_bytes().into_iter().for_each(|b| self.u8(b));
    }
    #[inline(always)]
    fn u32(&mut self, x: u32) {
        x.to_le_bytes().into_iter().for_each(|b| self.u8(b));
    }
    #[inline(always)]
    fn log(&mut self, l: &Log) {
        self.u8(l.len);
        l.entries.iter().for_each(|e| self.u8(e.0));
    }
}

/// Reads at a running offset, as [`Writer`] writes.
struct Reader<'a> {
    bytes: &'a [u8; STATE_BYTES],
    at: usize,
}

impl Reader<'_> {
    #[inline(always)]
    fn u8(&mut self) -> u8 {
        self.at += 1;
        self.bytes[self.at - 1]
    }
    #[inline(always)]
    fn bool(&mut self) -> bool {
        self.u8() != 0
    }
    #[inline(always)]
    fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }
    #[inline(always)]
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }
    #[inline(always)]
    fn log(&mut self) -> Log {
        Log {
            len: self.u8(),
            entries: std::array::from_fn(|_| Entry(self.u8())),
        }
    }
    #[inline(always)]
    fn slots(&mut self) -> Slots {
        Slots(self.u16())
    }
}

pub(super) fn encode(s: &State, out: &mut [u8; STATE_BYTES]) {
    let mut w = Writer { out, at: 0 };
    for n in &s.nodes {
        w.bool(n.alive);
        w.u8(n.gen);
        w.log(&n.log);
        w.u8(n.seen);
        w.u8(n.sealed_at);
        let v = &n.serving;
        w.bool(v.active);
        w.u8(v.epoch);
        w.u16(v.counted.0);
        w.u8(v.w);
        w.bool(v.open);
        w.u8(v.confirmed);
        w.bool(v.via_handoff);
        w.u32(v.acks.0);
        w.u16(v.floor);
        w.u16(v.muted.0);
        w.u8(n.inc);
        w.bool(n.suspended);
        w.bool(n.wiped_unbound);
        w.u8(n.base);
    }
    let r = &s.record;
    w.u8(r.epoch);
    w.u8(r.owner.0);
    for set in [r.followers, r.learners, r.leaving, r.eligible, r.suspended] {
        w.u16(set.0);
    }
    w.u8(r.rf);
    w.u8(r.rf_served);
    w.bool(r.adopted);
    w.bool(r.recovery.pending);
    w.u16(r.recovery.sealed.0);
    w.u16(r.recovery.installed.0);
    w.bool(r.recovery.chosen);
    w.log(&r.recovery.tail);
    w.u8(r.mv.phase as u8);
    w.u8(r.mv.target.0);
    w.u8(r.mv.boundary);
    w.u16(r.mv.replaces.0);
    w.u8(r.handoff.phase as u8);
    w.u8(r.handoff.from);
    w.u8(r.handoff.to);
    w.u8(r.handoff.fin);
    w.u8(r.handoff.fin_entry.0);
    w.u8(r.start);
    w.u8(r.start_entry.0);
    for x in s.budget.counters() {
        w.u8(x);
    }
    w.u8(s.net.len);
    for m in s.net.msgs {
        for x in m.pack() {
            w.u8(x);
        }
    }
    w.u8(s.known.epoch);
    w.u8(s.known.confirmed);
    w.u32(s.known.acks.0);
    for c in &s.clients {
        for x in [
            c.route_node,
            c.route_epoch,
            c.phase as u8,
            c.at,
            c.epoch,
            c.asking as u8,
            c.hops,
            c.msg,
            c.acked,
        ] {
            w.u8(x);
        }
    }
    w.log(&s.confirmed);
    w.bool(s.forked);
    w.u8(s.settled);
    assert_eq!(w.at, STATE_BYTES, "state encoding size changed");
}

fn req_phase(b: u8) -> ReqPhase {
    match b {
        x if x == ReqPhase::Idle as u8 => ReqPhase::Idle,
        x if x == ReqPhase::Sent as u8 => ReqPhase::Sent,
        x if x == ReqPhase::Accepted as u8 => ReqPhase::Accepted,
        _ => panic!("frontier file corrupt: request phase {b}"),
    }
}

fn move_phase(b: u8) -> MovePhase {
    match b {
        x if x == MovePhase::None as u8 => MovePhase::None,
        x if x == MovePhase::Learning as u8 => MovePhase::Learning,
        x if x == MovePhase::Admitted as u8 => MovePhase::Admitted,
        x if x == MovePhase::Swapped as u8 => MovePhase::Swapped,
        x if x == MovePhase::Promoted as u8 => MovePhase::Promoted,
        _ => panic!("frontier file corrupt: move phase {b}"),
    }
}

fn handoff_phase(b: u8) -> HandoffPhase {
    match b {
        x if x == HandoffPhase::None as u8 => HandoffPhase::None,
        x if x == HandoffPhase::Closed as u8 => HandoffPhase::Closed,
        x if x == HandoffPhase::Reported as u8 => HandoffPhase::Reported,
        x if x == HandoffPhase::Committed as u8 => HandoffPhase::Committed,
        _ => panic!("frontier file corrupt: handoff phase {b}"),
    }
}

pub(super) fn decode(bytes: &[u8; STATE_BYTES]) -> State {
    let mut r = Reader { bytes, at: 0 };
    let nodes = std::array::from_fn(|_| Node {
        alive: r.bool(),
        gen: r.u8(),
        log: r.log(),
        seen: r.u8(),
        sealed_at: r.u8(),
        serving: Serving {
            active: r.bool(),
            epoch: r.u8(),
            counted: r.slots(),
            w: r.u8(),
            open: r.bool(),
            confirmed: r.u8(),
            via_handoff: r.bool(),
            acks: Acks(r.u32()),
            floor: r.u16(),
            muted: r.slots(),
        },
        inc: r.u8(),
        suspended: r.bool(),
        wiped_unbound: r.bool(),
        base: r.u8(),
    });
    let record = Record {
        epoch: r.u8(),
        owner: Slot(r.u8()),
        followers: r.slots(),
        learners: r.slots(),
        leaving: r.slots(),
        eligible: r.slots(),
        suspended: r.slots(),
        rf: r.u8(),
        rf_served: r.u8(),
        adopted: r.bool(),
        recovery: Recovery {
            pending: r.bool(),
            sealed: r.slots(),
            installed: r.slots(),
            chosen: r.bool(),
            tail: r.log(),
        },
        mv: Move {
            phase: move_phase(r.u8()),
            target: Slot(r.u8()),
            boundary: r.u8(),
            replaces: r.slots(),
        },
        handoff: Handoff {
            phase: handoff_phase(r.u8()),
            from: r.u8(),
            to: r.u8(),
            fin: r.u8(),
            fin_entry: Entry(r.u8()),
        },
        start: r.u8(),
        start_entry: Entry(r.u8()),
    };
    let budget = Budget {
        published: r.u8(),
        crashes: r.u8(),
        suspicions: r.u8(),
        restarts: r.u8(),
        disk_losses: r.u8(),
        learner_adds: r.u8(),
        handoffs: r.u8(),
        cancels: r.u8(),
        retries: r.u8(),
        drops: r.u8(),
        dups: r.u8(),
        truncations: r.u8(),
        publish_retries: r.u8(),
        settles: r.u8(),
    };
    let mut net = crate::net::Net {
        len: r.u8(),
        ..Default::default()
    };
    for m in net.msgs.iter_mut() {
        *m = crate::net::Msg::unpack(std::array::from_fn(|_| r.u8()));
    }
    let s = State {
        nodes,
        record,
        budget,
        net,
        known: Known {
            epoch: r.u8(),
            confirmed: r.u8(),
            acks: Acks(r.u32()),
        },
        clients: std::array::from_fn(|_| Client {
            route_node: r.u8(),
            route_epoch: r.u8(),
            phase: req_phase(r.u8()),
            at: r.u8(),
            epoch: r.u8(),
            asking: r.bool(),
            hops: r.u8(),
            msg: r.u8(),
            acked: r.u8(),
        }),
        confirmed: r.log(),
        forked: r.bool(),
        settled: r.u8(),
    };
    assert_eq!(r.at, STATE_BYTES, "state decoding size changed");
    s
}

/// Words of 8 bytes an encoded state is compared in by [`pack`].
const WORDS: usize = STATE_BYTES.div_ceil(8);
/// Bytes of the mask of changed words.
const MASK_BYTES: usize = WORDS.div_ceil(8);
const _: () = assert!(WORDS <= 64);

/// A run of states as bytes for the frontier's files, each state against
/// the one before it (the first against all zeros): consecutive frontier
/// states are mostly siblings and cousins, which differ in a few bytes of
/// their encodings. Per state, a mask of the 8-byte words that changed,
/// then for each such word a mask of its changed bytes and those bytes.
/// A state costs a tenth or so of [`STATE_BYTES`], so the files take that
/// much less writing and reading.
pub(super) fn pack(states: &[State], out: &mut Vec<u8>) {
    let mut prev = [0u8; WORDS * 8];
    let mut cur = [0u8; WORDS * 8];
    // One state's packing, at most: its mask, then a mask and 8 bytes per
    // word.
    let mut one = [0u8; MASK_BYTES + WORDS * 9];
    for s in states {
        encode(
            s,
            (&mut cur[..STATE_BYTES])
                .try_into()
                .expect("a state's bytes"),
        );
        let mut mask = 0u64;
        let mut at = MASK_BYTES;
        for (w, (c, p)) in cur.chunks_exact(8).zip(prev.chunks_exact(8)).enumerate() {
            let c = u64::from_le_bytes(c.try_into().expect("8 bytes"));
            let x = c ^ u64::from_le_bytes(p.try_into().expect("8 bytes"));
            if x == 0 {
                continue;
            }
            mask |= 1 << w;
            let bytes = changed_bytes(x);
            one[at] = bytes;
            at += 1;
            let mut rest = bytes;
            while rest != 0 {
                let b = rest.trailing_zeros();
                rest &= rest - 1;
                one[at] = (c >> (8 * b)) as u8;
                at += 1;
            }
        }
        one[..MASK_BYTES].copy_from_slice(&mask.to_le_bytes()[..MASK_BYTES]);
        out.extend_from_slice(&one[..at]);
        prev = cur;
    }
}

/// Bit `b` set for each byte `b` of `x` that is not zero (the high bit of
/// each nonzero byte, gathered by one multiplication).
#[inline(always)]
fn changed_bytes(x: u64) -> u8 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let high = (((x & LOW7) + LOW7) | x) & !LOW7;
    ((high >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56) as u8
}

pub(super) fn unpack(bytes: &[u8], mut out: impl FnMut(State)) {
    let mut cur = [0u8; WORDS * 8];
    let mut at = 0;
    let corrupt = || -> ! { panic!("frontier file corrupt: a packed state runs past its chunk") };
    while at < bytes.len() {
        let mut m = [0u8; 8];
        m[..MASK_BYTES]
            .copy_from_slice(bytes.get(at..at + MASK_BYTES).unwrap_or_else(|| corrupt()));
        at += MASK_BYTES;
        let mut mask = u64::from_le_bytes(m);
        while mask != 0 {
            let w = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            let changed = *bytes.get(at).unwrap_or_else(|| corrupt());
            at += 1;
            for b in 0..8 {
                if changed & (1 << b) != 0 {
                    cur[8 * w + b] = *bytes.get(at).unwrap_or_else(|| corrupt());
                    at += 1;
                }
            }
        }
        out(decode(
            (&cur[..STATE_BYTES]).try_into().expect("a state's bytes"),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Cfg, MoveModel};
    use std::collections::HashSet;

    #[test]
    fn changed_bytes_names_every_nonzero_byte() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Bytes zeroed at random, 0x80 and 0x01 among the others.
            let v = (x & (x >> 3) & 0xff80_ff01_ffff_00ff) | (0x0000_8000_0000_0100 * (x & 1));
            let want = (0..8).fold(0u8, |m, b| m | u8::from((v >> (8 * b)) & 0xff != 0) << b);
            assert_eq!(changed_bytes(v), want, "{v:#018x}");
        }
        assert_eq!(changed_bytes(0), 0);
        assert_eq!(changed_bytes(u64::MAX), 0xff);
        assert_eq!(changed_bytes(0x0100_0000_0000_0080), 0b1000_0001);
    }

    #[test]
    fn every_reachable_state_round_trips() {
        // Faults of every kind, a move, an rf increase and a handoff.
        let mut seen = 0;
        for name in [
            "recovery-during-move",
            "rf-increase",
            "handoff-faults",
            "fresh-disk-zombie",
        ] {
            let m = MoveModel::new(Cfg::named(name));
            let mut queue = vec![m.init()];
            let mut visited: HashSet<State> = queue.iter().copied().collect();
            let mut succ = Vec::new();
            let mut buf = [0u8; STATE_BYTES];
            let mut run = Vec::new();
            let mut packed = Vec::new();
            while let Some(s) = queue.pop() {
                run.push(s);
                if run.len() == 1000 || queue.is_empty() {
                    packed.clear();
                    pack(&run, &mut packed);
                    let mut back = Vec::new();
                    unpack(&packed, |s| back.push(s));
                    assert_eq!(
                        back, run,
                        "{name}: a run of states does not round-trip packed"
                    );
                    run.clear();
                }
                encode(&s, &mut buf);
                assert_eq!(decode(&buf), s, "{name}: a state does not round-trip");
                seen += 1;
                succ.clear();
                m.successors(&s, &mut succ);
                for (_, t) in &succ {
                    if visited.len() < 300_000 && visited.insert(*t) {
                        queue.push(*t);
                    }
                }
            }
        }
        assert!(seen > 500_000, "only {seen} states round-tripped");
    }
}
