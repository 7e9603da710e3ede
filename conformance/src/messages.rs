//! Messages in flight, both ways between the model's `net::Msg` and the
//! implementation's `net::Msg`: the same fields under the same names;
//! nodes are renumbered (see `driver`), storage instances are slots, an
//! entry `m<k>@e<e>` is the implementation's `Put { key: k, value: k }`
//! tagged `e` (both sides number messages 1, 2, ... in publish order), a
//! settle `s<k>@e<e>` its `Delete { key: k }`, and the model's empty `prev`
//! is `None`.

use crate::abstraction::{entry, epoch, pos, slot, UNREPRESENTABLE};
use crate::driver::{to_impl, to_model};
use livemove_impl::{Entry as IEntry, Epoch, Msg as IMsg, Op, StorageId};
use livemove_model::net::{Msg, Net, NET_MAX};
use livemove_model::types::{Entry, Slot};

/// The implementation's message as the model's.
pub fn to_model_msg(m: &IMsg) -> Msg {
    let inc = |i: u32| u8::try_from(i).unwrap_or(UNREPRESENTABLE);
    match *m {
        IMsg::Append {
            from,
            to,
            epoch: e,
            pos: p,
            prev,
            entry: x,
        } => Msg::Append {
            from: to_model(from),
            to: slot(to),
            epoch: epoch(e),
            pos: pos(p),
            prev: prev.map_or(Entry(0), entry),
            entry: entry(x),
        },
        IMsg::Ack {
            to,
            epoch: e,
            from,
            inc: i,
            pos: p,
            entry: x,
            admitted,
        } => Msg::Ack {
            to: to_model(to),
            epoch: epoch(e),
            from: slot(from),
            inc: inc(i),
            pos: pos(p),
            entry: entry(x),
            admitted,
        },
        IMsg::Refuse { to, epoch: e } => Msg::Refuse {
            to: to_model(to),
            epoch: epoch(e),
        },
        IMsg::Suspend { to, from, inc: i } => Msg::Suspend {
            to: to_model(to),
            from: slot(from),
            inc: inc(i),
        },
        IMsg::Progress {
            from,
            epoch: e,
            of,
            pos: p,
            confirmed,
        } => Msg::Progress {
            from: slot(from),
            epoch: epoch(e),
            of: slot(of),
            pos: pos(p),
            confirmed: pos(confirmed),
        },
    }
}

/// The model's message as the implementation's (the inverse of
/// [`to_model_msg`] on every message the model can hold).
pub fn to_impl_msg(m: &Msg) -> IMsg {
    match *m {
        Msg::None => panic!("invariant broken: the model's empty cell is not a message"),
        Msg::Append {
            from,
            to,
            epoch,
            pos,
            prev,
            entry,
        } => IMsg::Append {
            from: to_impl(from),
            to: storage(to),
            epoch: Epoch(u64::from(epoch)),
            pos: u64::from(pos),
            prev: (!prev.is_none()).then(|| impl_entry(prev)),
            entry: impl_entry(entry),
        },
        Msg::Ack {
            to,
            epoch,
            from,
            inc,
            pos,
            entry,
            admitted,
        } => IMsg::Ack {
            to: to_impl(to),
            epoch: Epoch(u64::from(epoch)),
            from: storage(from),
            inc: u32::from(inc),
            pos: u64::from(pos),
            entry: impl_entry(entry),
            admitted,
        },
        Msg::Refuse { to, epoch } => IMsg::Refuse {
            to: to_impl(to),
            epoch: Epoch(u64::from(epoch)),
        },
        Msg::Suspend { to, from, inc } => IMsg::Suspend {
            to: to_impl(to),
            from: storage(from),
            inc: u32::from(inc),
        },
        Msg::Progress {
            from,
            epoch,
            of,
            pos,
            confirmed,
        } => IMsg::Progress {
            from: storage(from),
            epoch: Epoch(u64::from(epoch)),
            of: storage(of),
            pos: u64::from(pos),
            confirmed: u64::from(confirmed),
        },
    }
}

/// The implementation's messages in flight as the model's multiset. More
/// than the model can hold shows as an unrepresentable last message.
pub fn net<'a>(msgs: impl IntoIterator<Item = &'a IMsg>) -> Net {
    let mut n = Net::default();
    for m in msgs {
        if n.is_full() {
            n.remove(n.msgs[NET_MAX - 1]);
            n.add(Msg::Refuse {
                to: UNREPRESENTABLE & 0x1f,
                epoch: UNREPRESENTABLE,
            });
            break;
        }
        n.add(to_model_msg(m));
    }
    n
}

fn storage(s: Slot) -> StorageId {
    StorageId {
        node: to_impl(s.node()),
        disk: u32::from(s.gen()),
    }
}

fn impl_entry(e: Entry) -> IEntry {
    if e.is_none() {
        return IEntry::missing();
    }
    let op = match (e.settles(), u64::from(e.msg())) {
        (Some(m), _) => Op::Delete { key: u64::from(m) },
        (None, key) => Op::Put { key, value: key },
    };
    IEntry {
        epoch: Epoch(u64::from(e.epoch())),
        op,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_maps_back_to_itself() {
        let msgs = [
            Msg::Append {
                from: 0,
                to: Slot::new(2, 1),
                epoch: 2,
                pos: 3,
                prev: Entry::new(1, 2),
                entry: Entry::new(2, 3),
            },
            Msg::Append {
                from: 1,
                to: Slot::new(0, 0),
                epoch: 1,
                pos: 1,
                prev: Entry(0),
                entry: Entry::new(1, 1),
            },
            Msg::Append {
                from: 2,
                to: Slot::new(1, 0),
                epoch: 2,
                pos: 3,
                prev: Entry::new(1, 2),
                entry: Entry::settle(2, 1),
            },
            Msg::Ack {
                to: 1,
                epoch: 3,
                from: Slot::new(3, 0),
                inc: 2,
                pos: 4,
                entry: Entry::new(3, 1),
                admitted: false,
            },
            Msg::Refuse { to: 3, epoch: 2 },
            Msg::Suspend {
                to: 0,
                from: Slot::new(1, 0),
                inc: 1,
            },
            Msg::Progress {
                from: Slot::new(1, 1),
                epoch: 3,
                of: Slot::new(3, 0),
                pos: 2,
                confirmed: 1,
            },
        ];
        for m in msgs {
            assert_eq!(to_model_msg(&to_impl_msg(&m)), m, "{m}");
        }
    }
}
