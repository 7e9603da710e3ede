------------------------------ MODULE LiveMove ------------------------------
(***************************************************************************)
(* Live rebalancing and replica moves for one replicated queue partition.  *)
(*                                                                         *)
(* The protocol is explained in ../docs/protocol.md; the requirement is    *)
(* the two design notes it cites. This spec mirrors the Stateright model   *)
(* in ../model/src/ state for state: the same variables, the same 40       *)
(* actions under the same names, every property of                         *)
(* ../model/src/properties.rs under a name derived from its sentence, and  *)
(* every mutant of ../model/src/mutant.rs as a value of the constant       *)
(* MUTANT. `livemove tlc` checks that TLC and the Rust model reach the      *)
(* same number of distinct states, and for the small configurations the    *)
(* very same set of states (see README.md in this folder).                 *)
(*                                                                         *)
(* Simplifications (the same ones the Rust model makes):                   *)
(*  - Every action is atomic. The controller's record changes by one       *)
(*    guarded write per action; the compare-and-set on the record version  *)
(*    is what makes that atomic in the implementation.                     *)
(*  - Messages are a configuration switch, NET (Network.tla). Without     *)
(*    them Replicate(from, to) ships the next entry the receiver lacks     *)
(*    directly from the sender's log, the receiver's acknowledgement       *)
(*    reaches the sender in the same step, and a refusal answers at once;  *)
(*    a replica receives its sender's entries in log order. With them the  *)
(*    serving path travels as messages (appends, acknowledgements,         *)
(*    refusals, suspension notices) in a bag: Replicate sends, Deliver,    *)
(*    Drop and Duplicate are the network's steps. The owner's progress     *)
(*    reports to the controller are messages too (ReportProgress sends,    *)
(*    the controller takes or refuses on delivery): with them the          *)
(*    controller's guards of moves, handoff commits and rejoins read only  *)
(*    what the owner reported (`known`), never another process's state.   *)
(*    Seals, installs, quorum receipts, a recovery's activation and the    *)
(*    owner's report of its final boundary stay atomic (calls to the       *)
(*    controller, answered in the step).                                   *)
(*  - The network's bag is unbounded here; the Rust model keeps fewer     *)
(*    than NET_MAX = 12 messages, and the invariant "messages in flight    *)
(*    stay below the network's capacity" checks that bound on both. A      *)
(*    link's window counts a refusal against every link touching its       *)
(*    destination (the model's on_link). A process incarnation (`inc`) is  *)
(*    counted only with messages in flight, where acknowledgements carry   *)
(*    it.                                                                  *)
(*  - One partition, nodes 1..N, node 1 the first owner, nodes 2..RF its   *)
(*    first followers. Logs hold at most MESSAGES + SETTLES entries       *)
(*    (LogMax under duplicate_append_applies_twice): every Publish writes  *)
(*    a fresh message id and a log settles a message at most once, so an   *)
(*    entry <<epoch, msg>> names one write.                                *)
(*  - A storage instance is <<node, gen>>: gen 0 is the node's first disk, *)
(*    gen 1 the fresh disk it may come back with (at most one disk loss    *)
(*    per node).                                                           *)
(*  - Budgets (publishes, crashes, suspicions, restarts, disk losses,      *)
(*    planned learner additions, handoffs, operator cancels, truncations) *)
(*    bound every path, so the state graph is finite and acyclic and       *)
(*    terminal states are expected: run TLC with -deadlock. A planned move *)
(*    cancelled for a reason earns one retry (budget.retries), and the     *)
(*    controller's replacement of a copy that is down or lost needs no     *)
(*    budget: it is bounded by the faults that made copies down or lost.   *)
(*    The Rust checker verifies that the graph is acyclic; on a cyclic one *)
(*    (only mutants make one) the leads-to form below is what sees the     *)
(*    cycle.                                                               *)
(*  - `eventually` properties are progress under faults, checked in every  *)
(*    configuration on terminal states, as the Rust checker does: a        *)
(*    terminal state is where the system rests once the budgeted faults    *)
(*    stop, and each property must hold there unless more copies are down *)
(*    than min(W - 1, rf - W) (seals and quorum receipts both survive that *)
(*    many). Weak fairness is not part of Spec: on an acyclic graph every  *)
(*    maximal behaviour ends in a terminal state, which the invariant form *)
(*    checks; LiveSpec adds WF_vars(Next) for the leads-to form, which     *)
(*    `livemove tlc` uses only where a mutant makes the graph cyclic.      *)
(*  - The controller's decisions (abort a move or handoff whose target is  *)
(*    down or lost, swap the leaving copy back, replace a lost copy) are   *)
(*    guarded actions that may fire whenever their reason holds; failure  *)
(*    detection is exact (a node is down or it is not). With messages in  *)
(*    flight a rejoin reads only the owner's report, not liveness: the     *)
(*    copy may be down again when it is re-admitted (finding 21). An       *)
(*    operator's cancel is a budgeted request (CANCELS).                   *)
(*  - Timeouts, suspicion and failure detection are a budgeted             *)
(*    OpenRecovery(zombie = TRUE); crash detection is OpenRecovery(FALSE)  *)
(*    once the owner is down.                                              *)
(*  - History variables `confirmed` and `forked` (and the per-node         *)
(*    `wiped_unbound`) exist only for the properties.                      *)
(*  - Retention (TRUNCATIONS > 0) is modelled only without messages in     *)
(*    flight (NET = FALSE), as in the Rust model: a checkpoint is a node's *)
(*    `base`, the log position whose entry (and epoch tag) it is bound to; *)
(*    the log still names the entries folded into it, since the           *)
(*    checkpoint's state is their effect and the properties read them.     *)
(*    Truncate takes one at the owner's confirmed tail (budgeted) and      *)
(*    InstallCheckpoint ships it to a copy in one step, with no message.   *)
(*  - The producer (PUBLISH_RETRIES > 0) is one client whose newest        *)
(*    publish may time out (its acknowledgement late or lost) and be sent  *)
(*    again, with its producer id and sequence (the message id), to a node *)
(*    that serves: RetryPublish(n). The owner's history is its producer    *)
(*    record: an owner that holds the message answers from it, one that    *)
(*    lacks it appends it at its own epoch.                                *)
(*  - Client routing (CLIENT_HOPS > 0; note 2, after Redis Cluster's MOVED *)
(*    and ASK) makes producers clients, CLIENTS of them (at most 2), each  *)
(*    with its own cached stable route: every publish and retry comes from *)
(*    them (Publish and RetryPublish are off), one request at a time per   *)
(*    client, each answered by the node it is at from that node's own      *)
(*    state (Reply(k)), followed within CLIENT_HOPS hops, and acknowledged *)
(*    once the accepting node's confirmed tail covers it. A timeout        *)
(*    (ClientTimeout(k)) is a client's deadline on its request in flight;  *)
(*    it refreshes the route from the record, the control plane. Message  *)
(*    ids come from one budget, so an id names its producer and sequence.  *)
(*    Without a client `clients` holds one idle client with no route.      *)
(*  - Consumer settles (SETTLES > 0; note 2, "deletions must propagate as  *)
(*    log events"): one consumer settles (deletes) the oldest message the  *)
(*    owner delivered, Settle(n). A settle is a log entry like a publish,  *)
(*    <<epoch, SettleBit + m>> (SettleBit = 8, so a publish's message id   *)
(*    stays below it: the model's low nibble; above MESSAGES when a trace  *)
(*    publishes more), under the same confirm                             *)
(*    rule, carried by replication, recovery, handoff and checkpoints. The *)
(*    history variable `settled` is the set of messages whose settle the   *)
(*    consumer was told is done: NoteConfirmed adds every settle in the    *)
(*    confirmed range it is given. Without settles it stays {}.            *)
(*  - Fields of an idle move, handoff, recovery or serving record keep the *)
(*    default values the Rust model gives them (0, <<>>, {}, FALSE), so    *)
(*    the two state spaces are in one-to-one correspondence; an idle move  *)
(*    names no target (NoSlot) and an idle handoff no nodes (0).           *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets, Network

CONSTANTS
    N,             \* nodes
    RF,            \* configured replication factor at the start
    MESSAGES,      \* publishes in total
    CRASHES,
    SUSPICIONS,    \* owner suspicions while it is still alive (zombies)
    RESTARTS,
    DISK_LOSSES,   \* restarts that come back on a fresh disk (part of RESTARTS)
    MOVES,         \* follower moves (step 0, swap, removal)
    RF_INCREASES,  \* replication-factor increases (step 0, promotion)
    HANDOFFS,
    CANCELS,       \* operator cancels of a move or a handoff
    TRUNCATIONS,   \* checkpoints an owner takes, reclaiming the increments below
    PUBLISH_RETRIES, \* the producer's retries of its newest publish after a timeout
    CLIENT_HOPS,   \* 0: no client; else the hops a client's request may follow
    CLIENTS,       \* with CLIENT_HOPS > 0: how many clients (producers) publish
    SETTLES,       \* the consumer's settles of a delivered message
    MUTANT         \* "none" or the name of one mutant of the bug zoo
                   \* (NET, WINDOW, DROPS and DUPS: Network.tla)

Mutants == {"none", "w_from_assignment", "learner_counts",
            "swap_before_admission", "remove_before_boundary",
            "recovery_keeps_move", "handoff_without_barrier",
            "no_seal_fencing", "small_seal_quorum", "promote_without_catchup",
            "rejoin_counts_early", "storage_identity_ignored",
            "seal_with_new_w", "covers_by_length", "adopt_w_before_catchup",
            "no_swap_back", "receipts_skip_suspended",
            "restart_counts_own_suspension", "no_retry_after_cancel",
            "no_replacement", "learner_keeps_old_epoch",
            \* Messages in flight only (NET = TRUE):
            "stale_ack_counts", "duplicate_append_applies_twice",
            "refusal_ignored", "stale_progress_admits",
            "activation_forgets_receipts", "swap_back_of_owner",
            "report_window_ignores_refusal",
            \* Retention (TRUNCATIONS > 0, NET = FALSE):
            "truncate_before_confirm", "checkpoint_overwrites_newer",
            "checkpoint_without_epoch_tag",
            \* Producer retries (PUBLISH_RETRIES > 0), and the handoff:
            "retry_without_producer_id", "old_owner_serves_after_commit",
            \* Client routing (CLIENT_HOPS > 0):
            "ask_updates_route", "no_hop_limit", "ack_before_confirm",
            \* Retention (TRUNCATIONS > 0, NET = FALSE):
            "replay_accepts_gap",
            \* Consumer settles (SETTLES > 0):
            "settle_acked_before_confirm",
            \* The handoff's continuation (finding 33):
            "handoff_keeps_stale_tail",
            \* The recovered tail's candidates (finding 34):
            "recovery_trusts_last_tag",
            \* The owner's reading of re-admissions (finding 35; messages in
            \* flight only):
            "owner_ignores_readmission"}

ASSUME /\ N \in 2..5
       /\ RF >= 2 /\ RF + RF_INCREASES <= N
       /\ MESSAGES \in 0..4
       /\ SETTLES > 0 => MESSAGES < 8   \* types::SETTLE_BIT: ids below the settle bit
       /\ CLIENT_HOPS \in 0..8   \* config::CLIENT_HOPS_MAX
       /\ CLIENTS \in 1..2       \* types::CLIENTS_MAX
       /\ CLIENTS > 1 => CLIENT_HOPS > 0
       /\ DISK_LOSSES <= RESTARTS
       /\ NET => TRUNCATIONS = 0   \* as Cfg::validate: retention is atomic only
       /\ MUTANT \in Mutants

VARIABLES
    nodes,      \* per node: process, disk, durable log, fences, serving state
    record,     \* the controller's replicated record
    budget,     \* operations and faults used so far
    net,        \* the messages in flight, a bag (empty unless NET)
    known,      \* the controller's knowledge of progress (idle unless NET)
    clients,    \* the clients that route publishes, 1..CLIENTS (idle unless CLIENT_HOPS)
    confirmed,  \* history: the entry first confirmed at each position
    forked,     \* history: a different entry was confirmed at a confirmed position
    settled     \* history: the messages whose settle the consumer was told is done

vars == <<nodes, record, budget, net, known, clients, confirmed, forked, settled>>

-----------------------------------------------------------------------------
(* Building blocks (model/src/types.rs)                                    *)

Nodes == 1..N
LogMax == 4                 \* types::LOG_MAX: the longest log a disk holds
Has(m) == MUTANT = m
Majority(rf) == rf \div 2 + 1
RFMax == RF + RF_INCREASES
Max2(a, b) == IF a > b THEN a ELSE b
Min2(a, b) == IF a < b THEN a ELSE b
Monus(a, b) == IF a > b THEN a - b ELSE 0     \* saturating subtraction
MaxOf(S) == CHOOSE x \in S : \A y \in S : y <= x

(* An entry is <<epoch, msg>>; NoEntry is what a log holds past its end    *)
(* (and, under replay_accepts_gap, at a position a gap skipped).           *)
NoEntry == <<0, 0>>
EpochOf(e) == e[1]

(* The operation of an entry (types::Entry): msg 1..SettleBit - 1          *)
(* publishes that message, SettleBit + m settles (deletes) message m.      *)
(* SettleBit is 8 (the Rust model's low nibble) for every configuration  *)
(* of the model, whose MESSAGES is at most 4; a runtime trace validated   *)
(* through TraceLiveMove.tla publishes as many messages as it has Publish *)
(* events, and its settles must still be told apart from its publishes,   *)
(* so SettleBit rises above MESSAGES there.                               *)
SettleBit == IF MESSAGES < 8 THEN 8 ELSE MESSAGES + 1
SettleEntry(epoch, m) == <<epoch, SettleBit + m>>
IsSettle(e) == e[2] > SettleBit
SettledMsg(e) == e[2] - SettleBit
PublishesMsg(e, m) == e[2] = m /\ m > 0 /\ m < SettleBit

(* Logs are sequences: positions are 1-based, as in the notes.             *)
At(log, p) == IF p >= 1 /\ p <= Len(log) THEN log[p] ELSE NoEntry
LastEpoch(log) == EpochOf(At(log, Len(log)))
(* Whether `log` holds `other`'s history through position p: the entry at  *)
(* p is the same write, not just any entry (history compare, not length).  *)
(* (An IF, not a disjunction: inside an action TLC evaluates every        *)
(* disjunct, and log[0] does not exist.) The properties use this one.      *)
LogCovers(log, other, p) ==
    IF p = 0 THEN TRUE
    ELSE Len(log) >= p /\ Len(other) >= p /\ log[p] = other[p]
CommonPrefix(a, b) ==
    LET m == Min2(Len(a), Len(b))
    IN  CHOOSE i \in 0..m : /\ \A j \in 1..i : a[j] = b[j]
                            /\ i = m \/ a[i + 1] # b[i + 1]

(* A storage instance: one disk of one node.                               *)
NoSlot == <<0, 0>>
SlotOf(n) == <<n, nodes[n].gen>>
Current(s) == nodes[s[1]].gen = s[2]          \* that disk still exists
CurrentOf(S) == {s \in S : Current(s)}
SlotLess(a, b) == a[1] < b[1] \/ (a[1] = b[1] /\ a[2] < b[2])
MinSlot(S) == CHOOSE s \in S : \A t \in S : s = t \/ SlotLess(s, t)

(* An owner's acknowledgements (Serving::acks): the set of <<slot, pos>>   *)
(* for every instance that acknowledged holding the owner's history        *)
(* through pos >= 1.                                                       *)
AckOf(acks, s) == IF \E a \in acks : a[1] = s
                  THEN (CHOOSE a \in acks : a[1] = s)[2] ELSE 0
SetAck(acks, s, p) == {a \in acks : a[1] # s} \cup (IF p > 0 THEN {<<s, p>>} ELSE {})

-----------------------------------------------------------------------------
(* Idle values (model/src/state.rs, the Default of each struct)            *)

(* With messages in flight an owner also keeps, per node, the oldest       *)
(* process incarnation whose acknowledgements it still takes (`floor`,     *)
(* raised by a suspension notice), and the instances it heard are          *)
(* suspended (`muted`: their acknowledgements pace catch-up but do not     *)
(* count). Both stay at their idle values without messages.                *)
NoFloor == [n \in Nodes |-> 0]
NoServing == [active |-> FALSE, epoch |-> 0, counted |-> {}, w |-> 0,
              open |-> FALSE, confirmed |-> 0, via_handoff |-> FALSE,
              acks |-> {}, floor |-> NoFloor, muted |-> {}]
NoMove == [phase |-> "None", target |-> NoSlot, boundary |-> 0, replaces |-> {}]
NoHandoff == [phase |-> "None", from |-> 0, to |-> 0, fin |-> 0,
              fin_entry |-> NoEntry]
NoRecovery == [pending |-> FALSE, sealed |-> {}, installed |-> {},
               chosen |-> FALSE, tail |-> <<>>]

(* What the controller knows of the copies' progress (State::known): what *)
(* the last progress report it took said; epoch 0 is nothing reported.    *)
(* Acknowledgements as the serving state's, <<slot, pos>> with pos >= 1.   *)
NoKnown == [epoch |-> 0, confirmed |-> 0, acks |-> {}]

FirstFollowers == {<<n, 0>> : n \in 2..RF}

(* A client (state::Client): its stable route <<node, epoch>> (NoRoute   *)
(* without a client), where its request stands ("Idle", "Sent" or          *)
(* "Accepted"), the node the request is at (0 while idle) with the epoch   *)
(* it carries, whether it follows an ASK, the hops it followed, the        *)
(* message it carries (or the last one that went unacknowledged; 0: none)  *)
(* and the set of messages acknowledged to it. A client starts idle with   *)
(* the first owner as its route (MoveModel::init). Each of the CLIENTS     *)
(* clients is a producer of its own; message ids come from one budget, so  *)
(* an id names its producer and that producer's sequence at once.          *)
NoRoute == <<0, 0>>
IdleClient == [route |-> NoRoute, phase |-> "Idle", at |-> 0, epoch |-> 0,
               asking |-> FALSE, hops |-> 0, msg |-> 0, acked |-> {}]

(* Owner n1, followers n2..n(RF), the rest empty; epoch 1.                 *)
Init ==
    /\ nodes = [n \in Nodes |->
                  [alive |-> TRUE, gen |-> 0, log |-> <<>>,
                   seen |-> IF n <= RF THEN 1 ELSE 0,
                   sealed_at |-> 0,
                   serving |-> IF n = 1
                                THEN [active |-> TRUE, epoch |-> 1,
                                      counted |-> FirstFollowers,
                                      w |-> Majority(RF), open |-> TRUE,
                                      confirmed |-> 0, via_handoff |-> FALSE,
                                      acks |-> {}, floor |-> NoFloor,
                                      muted |-> {}]
                                ELSE NoServing,
                   inc |-> 0,
                   suspended |-> FALSE,
                   wiped_unbound |-> FALSE,
                   base |-> 0]]
    /\ record = [epoch |-> 1, owner |-> <<1, 0>>,
                 followers |-> FirstFollowers, learners |-> {}, leaving |-> {},
                 eligible |-> FirstFollowers \cup {<<1, 0>>},
                 suspended |-> {}, rf |-> RF, rf_served |-> RF,
                 adopted |-> TRUE, recovery |-> NoRecovery,
                 mv |-> NoMove, handoff |-> NoHandoff,
                 start |-> 0, start_entry |-> NoEntry]
    /\ budget = [published |-> 0, crashes |-> 0, suspicions |-> 0,
                 restarts |-> 0, disk_losses |-> 0, learner_adds |-> 0,
                 handoffs |-> 0, cancels |-> 0, retries |-> 0,
                 drops |-> 0, dups |-> 0, truncations |-> 0,
                 publish_retries |-> 0, settles |-> 0]
    /\ net = NoMessages
    /\ known = NoKnown
    /\ clients = [k \in 1..CLIENTS |->
                     IF CLIENT_HOPS > 0 THEN [IdleClient EXCEPT !.route = <<1, 1>>]
                     ELSE IdleClient]
    /\ confirmed = <<>>
    /\ forked = FALSE
    /\ settled = {}

-----------------------------------------------------------------------------
(* Shared helpers (model/src/protocol/mod.rs)                              *)

(* Replica n accepts an append from a sender at `epoch`: not from an epoch *)
(* older than the newest it has seen, not at or below the one it sealed   *)
(* at. In the impl this check sits in the replica's append handler, the   *)
(* resource boundary that accepts writes (note 2).                         *)
Accepts(n, epoch) ==
    /\ epoch >= nodes[n].seen
    /\ Has("no_seal_fencing") \/ epoch > nodes[n].sealed_at

(* Node n may act as an owner at its serving epoch: alive, serving, fenced *)
(* neither by a seal nor by a newer epoch.                                 *)
Serves(n) ==
    /\ nodes[n].alive
    /\ nodes[n].serving.active
    /\ nodes[n].seen <= nodes[n].serving.epoch
    /\ nodes[n].sealed_at < nodes[n].serving.epoch

OwnerNode == record.owner[1]

(* The record's owner serves at the record's epoch (State::current_owner). *)
HasCurrentOwner ==
    LET o == OwnerNode
    IN  /\ nodes[o].alive
        /\ Current(record.owner)
        /\ nodes[o].serving.active
        /\ nodes[o].serving.epoch = record.epoch

(* The owner the controller takes progress from (MoveModel::owner).        *)
OwnerOk == HasCurrentOwner /\ Serves(OwnerNode)
OwnerTail == nodes[OwnerNode].serving.confirmed

NoRecoveryForMoves == ~record.recovery.pending \/ Has("recovery_keeps_move")


(* "Covers position p" as the protocol's guards check it (MoveModel::covers):*)
(* by history; by length alone under the covers_by_length mutant.          *)
Covers(log, reference, p) ==
    IF Has("covers_by_length") THEN Len(log) >= p ELSE LogCovers(log, reference, p)

WServed == Majority(record.rf_served)

(* Node n, alive, holds owner o's history through position p.             *)
NodeCovers(n, o, p) == nodes[n].alive /\ Covers(nodes[n].log, nodes[o].log, p)

(* With messages in flight the controller knows only what the owner        *)
(* reported: a report it took from the owner the record names at the       *)
(* record's epoch (MoveModel::known). Under stale_progress_admits any      *)
(* report it took will do.                                                 *)
KnownOk ==
    \/ known.epoch = record.epoch
    \/ Has("stale_progress_admits") /\ known.epoch > 0

(* The position through which instance x holds the owner's history, as     *)
(* reported. Under stale_progress_admits the controller keeps progress per *)
(* node, so a report on an instance whose disk is gone speaks for the      *)
(* node's next one (two disk generations at most).                         *)
KnownPos(x) ==
    IF Has("stale_progress_admits")
    THEN Max2(AckOf(known.acks, <<x[1], 0>>), AckOf(known.acks, <<x[1], 1>>))
    ELSE AckOf(known.acks, x)

(* The controller's view of the owner before a guarded write: without      *)
(* messages the record's owner serving unfenced at the record's epoch;     *)
(* with them a report from it at that epoch.                               *)
SeesOwner == IF NET THEN KnownOk ELSE OwnerOk

(* Whether the controller may take instance x as holding the owner's       *)
(* history through position p: without messages it reads both logs, with  *)
(* them it has only what the owner reported. SeesCaughtUp(x) is the same  *)
(* for the owner's confirmed tail, as known (reported) or read.            *)
SeesCovering(x, p) ==
    IF NET THEN KnownOk /\ KnownPos(x) >= p
    ELSE /\ OwnerOk
         /\ Current(x) /\ nodes[x[1]].alive
         /\ Covers(nodes[x[1]].log, nodes[OwnerNode].log, p)
SeesCaughtUp(x) ==
    IF NET THEN KnownOk /\ KnownPos(x) >= known.confirmed
    ELSE SeesCovering(x, OwnerTail)

(* The move's target names node n on its current disk, and n is alive.     *)
(* With messages in flight the controller cannot tell whether the target's *)
(* process is up (finding 28): only its disk identity is read.             *)
MoveTargetOk(n) == record.mv.target = SlotOf(n) /\ (NET \/ nodes[n].alive)

(* Cancel a move before its swap: the learner never counted.               *)
DropLearner(r) ==
    [r EXCEPT !.learners = @ \ {r.mv.target},
              !.eligible = @ \ {r.mv.target},
              !.mv = NoMove]

(* A planned move (one that replaces nothing) cancelled for a reason (a    *)
(* recovery, a lost target) earns one retry; a replacement needs none: the *)
(* copy it replaces is still counted and down or lost, so the controller   *)
(* starts another.                                                         *)
RetryFor(b, mv) == IF mv.replaces = {} THEN [b EXCEPT !.retries = @ + 1] ELSE b

(* The move's target is down or its disk is gone.                          *)
TargetGone ==
    LET t == record.mv.target
    IN  ~Current(t) \/ ~nodes[t[1]].alive

(* A move's target that a recovery made the owner is not taken back by the *)
(* move: a failed owner is recovered first, and the move's way out applies *)
(* to the follower it is afterwards (finding 25). Atomically the controller *)
(* acts only while the owner is up, so this never binds there.             *)
TargetNotOwner ==
    Has("swap_back_of_owner") \/ record.mv.target # record.owner

(* The counted followers whose copy is down or lost: the controller        *)
(* replaces them (note 1, "Lost follower replaced").                       *)
ToReplace ==
    IF Has("no_replacement") THEN {}
    ELSE {f \in record.followers : ~Current(f) \/ ~nodes[f[1]].alive}

(* Planned moves left: the budget of follower moves and rf increases, plus *)
(* one retry for each planned move a recovery or a lost target cancelled.  *)
PlannedLeft ==
    LET retries == IF Has("no_retry_after_cancel") THEN 0 ELSE budget.retries
    IN  budget.learner_adds < MOVES + RF_INCREASES + retries

(* Record a confirm of `from` through `upto` in the history variables. A  *)
(* confirmed settle is the consumer's answer that its settle is done:      *)
(* every settle at positions 1..upto, confirmed before or not.             *)
NoteConfirmed(from, upto) ==
    /\ confirmed' = IF upto > Len(confirmed)
                    THEN confirmed \o SubSeq(from, Len(confirmed) + 1, upto)
                    ELSE confirmed
    /\ forked' = \/ forked
                 \/ \E p \in 1..Min2(upto, Len(confirmed)) :
                        confirmed[p] # At(from, p)
    /\ settled' = settled \cup {SettledMsg(At(from, p)) :
                                   p \in {q \in 1..upto : IsSettle(At(from, q))}}

-----------------------------------------------------------------------------
(* Messages in flight (NET = TRUE; model/src/protocol/network.rs). The     *)
(* receiver decides from the message and its own state alone. Note 2 asks  *)
(* for exactly these checks where writes are accepted: the epoch fence, a  *)
(* gap refused ("log gap detected; cannot skip"), and a repeated write     *)
(* recognised.                                                             *)

(* The owner ships the entry after the last position the replica           *)
(* acknowledged to it, with the entry before it, so the replica can refuse *)
(* a gap. It knows nothing else of the replica: not whether it is up, nor  *)
(* what its log holds. It keeps at most WINDOW messages outstanding on the *)
(* link (its append, or the reply to it); a resend comes only after one is *)
(* lost, and premature resends are the network's duplicates.               *)
SendAppend(from, to) ==
    /\ from # to
    /\ Serves(from)
    /\ LET f == nodes[from]
           slot == SlotOf(to)
           targets == f.serving.counted \cup record.followers
                        \cup record.learners \cup record.leaving
           pos == AckOf(f.serving.acks, slot) + 1
       IN  /\ slot \in targets
           /\ pos <= Len(f.log)
           /\ LinkLoad(net, from, to) < WINDOW
           /\ net' = Send(net, AppendMsg(from, slot, f.serving.epoch, pos,
                                         At(f.log, pos - 1), At(f.log, pos)))
    /\ UNCHANGED <<nodes, record, budget, known, confirmed, forked, settled, clients>>

(* A replica receives an append m; `rest` is the network without it. A     *)
(* disk that is gone loses it. A refused append is answered with the newer *)
(* epoch the replica knows. An accepted one fences the replica at its      *)
(* epoch (a replica serving at an older epoch stops serving); a gap is     *)
(* neither applied nor acknowledged; the entry it already holds at that    *)
(* position changes nothing (duplicate_append_applies_twice applies it     *)
(* again at the tail); else the log is cut after pos - 1 and the entry     *)
(* appended. The acknowledgement is marked not admitted while the copy    *)
(* knows itself suspended (its own `suspended`, which lags the record:     *)
(* finding 22), as the receiver stands before the delivery.               *)
OnAppend(m, rest) ==
    LET n == m.to[1]
        nd == nodes[n]
        gap == m.pos > 1 /\ (Len(nd.log) < m.pos - 1 \/ At(nd.log, m.pos - 1) # m.prev)
        log == IF gap THEN nd.log
               ELSE IF At(nd.log, m.pos) = m.entry
                    THEN IF Has("duplicate_append_applies_twice")
                            /\ Len(nd.log) < LogMax
                         THEN Append(nd.log, m.entry) ELSE nd.log
                    ELSE Append(SubSeq(nd.log, 1, m.pos - 1), m.entry)
        admitted == ~nd.suspended \/ Has("rejoin_counts_early")
    IN  IF ~Current(m.to)
        THEN /\ net' = rest
             /\ UNCHANGED nodes
        ELSE IF ~Accepts(n, m.epoch)
        THEN /\ net' = Send(rest, RefuseMsg(m.from, Max2(nd.seen, nd.sealed_at + 1)))
             /\ UNCHANGED nodes
        ELSE /\ nodes' = [nodes EXCEPT
                            ![n].seen = Max2(@, m.epoch),
                            ![n].serving = IF @.active /\ @.epoch < m.epoch
                                           THEN NoServing ELSE @,
                            ![n].log = log]
             /\ net' = IF gap THEN rest
                       ELSE Send(rest, AckMsg(m.from, m.epoch, m.to, nd.inc,
                                              m.pos, m.entry, admitted))

(* An owner receives an acknowledgement: it takes it only while it still   *)
(* serves at the epoch the append was sent at, only from an incarnation no *)
(* older than the last suspension it heard of (stale_ack_counts takes any),*)
(* and only if it holds the acknowledged entry at that position (history, *)
(* not length: finding 1). One marked not admitted mutes the copy; an      *)
(* admitted one unmutes it.                                                *)
OnAck(m) ==
    LET o == m.to
        sv == nodes[o].serving
        holds == IF Has("covers_by_length") THEN Len(nodes[o].log) >= m.pos
                 ELSE At(nodes[o].log, m.pos) = m.entry
    IN  IF /\ sv.active /\ sv.epoch = m.epoch
           /\ m.inc >= sv.floor[m.from[1]] \/ Has("stale_ack_counts")
           /\ holds
        THEN nodes' = [nodes EXCEPT
                         ![o].serving.muted = IF m.admitted THEN @ \ {m.from}
                                              ELSE @ \cup {m.from},
                         ![o].serving.acks = IF m.pos > AckOf(@, m.from)
                                             THEN SetAck(@, m.from, m.pos)
                                             ELSE @]
        ELSE UNCHANGED nodes

(* A stale owner told of a newer epoch learns it and stops serving         *)
(* (refusal_ignored: it keeps serving, and sends again).                   *)
OnRefuse(m) ==
    IF Has("refusal_ignored") THEN UNCHANGED nodes
    ELSE nodes' = [nodes EXCEPT
                     ![m.to].seen = Max2(@, m.epoch),
                     ![m.to].serving = IF @.active /\ @.epoch < m.epoch
                                       THEN NoServing ELSE @]

(* A serving owner told that a follower restarted forgets its progress,    *)
(* mutes it, and takes no acknowledgement from an earlier incarnation.     *)
OnSuspend(m) ==
    IF nodes[m.to].serving.active
    THEN nodes' = [nodes EXCEPT
                     ![m.to].serving.acks = SetAck(@, m.from, 0),
                     ![m.to].serving.muted = @ \cup {m.from},
                     ![m.to].serving.floor[m.from[1]] = Max2(@, m.inc)]
    ELSE UNCHANGED nodes

(* The controller takes a progress report only from the owner the record  *)
(* names, at the record's epoch; a report from an older epoch is answered *)
(* with the record's epoch, which stops a stale owner that still serves    *)
(* (note 2: "when requests carry an old version, the server should         *)
(* reject"). A report at a newer epoch than the knowledge it holds         *)
(* replaces that knowledge (stale_progress_admits keeps the old            *)
(* acknowledgements).                                                      *)
OnProgress(m, rest) ==
    IF m.epoch = record.epoch /\ m.from = record.owner
    THEN LET acks == IF known.epoch # m.epoch /\ ~Has("stale_progress_admits")
                     THEN {} ELSE known.acks
         IN  /\ known' = [epoch |-> m.epoch, confirmed |-> m.confirmed,
                          acks |-> SetAck(acks, m.of, m.pos)]
             /\ net' = rest
    ELSE /\ net' = IF m.epoch < record.epoch
                   THEN Send(rest, RefuseMsg(m.from[1], record.epoch))
                   ELSE rest
         /\ UNCHANGED known

(* One copy of m reaches the process it is addressed to, which is up (a    *)
(* message to a process that is down waits: a retransmission after it     *)
(* restarts, to its next incarnation, or dropped). The controller is       *)
(* always up: its record is the replicated store.                          *)
Deliver(m) ==
    /\ m \in InFlight(net)
    (* An IF: inside an action TLC evaluates every disjunct, and the       *)
    (* controller is no node.                                              *)
    /\ IF m.kind = "Progress" THEN TRUE ELSE nodes[Dest(m)].alive
    /\ LET rest == Discard(net, m)
       IN  CASE m.kind = "Append" -> OnAppend(m, rest) /\ UNCHANGED known
             [] m.kind = "Ack" -> OnAck(m) /\ net' = rest /\ UNCHANGED known
             [] m.kind = "Refuse" -> OnRefuse(m) /\ net' = rest /\ UNCHANGED known
             [] m.kind = "Suspend" ->
                    OnSuspend(m) /\ net' = rest /\ UNCHANGED known
             [] m.kind = "Progress" -> OnProgress(m, rest) /\ UNCHANGED nodes
    /\ UNCHANGED <<record, budget, confirmed, forked, settled, clients>>

(* Progress: the owner `from` reports to the controller how far copy `of`  *)
(* holds its history, with its own confirmed tail. It reports on the       *)
(* copies a guarded write of the record waits to hear about (the move's    *)
(* target, a leaving copy, a suspended follower, a handoff's new owner),   *)
(* once the copy holds its confirmed tail (every such guard waits for      *)
(* that, or for a boundary at or below it), and again while the controller *)
(* holds something else: of the instances on node `of` the record waits   *)
(* on (a lost one leaving, its fresh successor joining), the first such.   *)
(* Like any message the report may arrive late, twice or never; the owner  *)
(* keeps one outstanding. The controller does not acknowledge a report   *)
(* (it sends only a refusal, to a stale owner: OnProgress).                *)
Awaited ==
    LET r == record
    IN  r.leaving \cup r.suspended
          \cup (IF r.mv.phase # "None" THEN {r.mv.target} ELSE {})
          \cup (IF r.handoff.phase \in {"Closed", "Reported"}
                THEN {SlotOf(r.handoff.to)} ELSE {})

ReportProgress(from, of) ==
    /\ NET
    /\ Serves(from)
    (* The window of a report covers its answer: a refusal on its way to   *)
    (* the reporter (finding 23: otherwise refusals pile up unbounded).    *)
    /\ ~\E m \in InFlight(net) :
          \/ m.kind = "Progress" /\ m.from[1] = from
          \/ /\ ~Has("report_window_ignores_refusal")
             /\ m.kind = "Refuse" /\ m.to = from
    /\ LET sv == nodes[from].serving
           news(x) ==
               /\ AckOf(sv.acks, x) >= sv.confirmed
               /\ \/ known.epoch # sv.epoch
                  \/ known.confirmed # sv.confirmed
                  \/ AckOf(known.acks, x) # AckOf(sv.acks, x)
           cands == {x \in Awaited : x[1] = of /\ news(x)}
       IN  /\ cands # {}
           /\ LET x == MinSlot(cands)
              IN  net' = Send(net, ProgressMsg(SlotOf(from), sv.epoch, x,
                                               AckOf(sv.acks, x), sv.confirmed))
    /\ UNCHANGED <<nodes, record, budget, known, confirmed, forked, settled, clients>>

(* The network loses one copy of m (budgeted).                             *)
Drop(m) ==
    /\ m \in InFlight(net)
    /\ budget.drops < DROPS
    /\ budget' = [budget EXCEPT !.drops = @ + 1]
    /\ net' = Discard(net, m)
    /\ UNCHANGED <<nodes, record, known, confirmed, forked, settled, clients>>

(* The network will deliver m once more: one more copy (budgeted).         *)
Duplicate(m) ==
    /\ m \in InFlight(net)
    /\ budget.dups < DUPS
    /\ budget' = [budget EXCEPT !.dups = @ + 1]
    /\ net' = Send(net, m)
    /\ UNCHANGED <<nodes, record, known, confirmed, forked, settled, clients>>

-----------------------------------------------------------------------------
(* Serving: Publish, Replicate, Confirm (model/src/protocol/serving.rs)    *)

(* The instances whose acknowledgements owner n counts: the counted set it *)
(* adopted from a committed record, less the ones it heard are suspended   *)
(* (only with messages in flight). Suspended followers are kept out by     *)
(* their acknowledgements: the owner the record names forgets a follower's *)
(* progress when it restarts, and a suspended copy acknowledges nothing    *)
(* until it rejoins.                                                       *)
CountedForConfirm(n) ==
    LET c0 == nodes[n].serving.counted \ nodes[n].serving.muted
    IN  IF Has("learner_counts") THEN c0 \cup record.learners ELSE c0

(* The write requirement owner n confirms with: the one it adopted from    *)
(* the configured replication factor.                                      *)
EffectiveW(n) ==
    IF Has("w_from_assignment")
    THEN Majority(1 + Cardinality(record.followers)
                    + Cardinality(record.learners))
    ELSE nodes[n].serving.w

(* Copies of owner n's entry at p on counted instances, itself included:  *)
(* the counted instances that acknowledged p or beyond to n. A copy that   *)
(* crashed or lost its disk since still counts for what it acknowledged.   *)
Copies(n, p) ==
    LET acks == nodes[n].serving.acks
    IN  1 + Cardinality({x \in CountedForConfirm(n) \ {SlotOf(n)} :
                           AckOf(acks, x) >= p})

(* What owner o credits a copy n that reports its durable tail: the whole  *)
(* tail if o holds the same entry at its end, else nothing.                *)
Credit(o, n) ==
    IF Covers(nodes[n].log, nodes[o].log, Len(nodes[n].log))
    THEN Len(nodes[n].log) ELSE 0

(* The tail owner n could confirm now: the last entry of its own epoch     *)
(* that W counted copies acknowledged.                                      *)
Confirmable(n) ==
    LET sv == nodes[n].serving
        ok == {p \in (sv.confirmed + 1)..Len(nodes[n].log) :
                 /\ EpochOf(nodes[n].log[p]) = sv.epoch
                 /\ Copies(n, p) >= EffectiveW(n)}
    IN  IF ok = {} THEN sv.confirmed ELSE MaxOf(ok)

(* With a client every publish comes from it (ClientPublish).              *)
Publish(n) ==
    /\ CLIENT_HOPS = 0
    /\ Serves(n)
    /\ nodes[n].serving.open
    /\ budget.published < MESSAGES
    /\ budget' = [budget EXCEPT !.published = @ + 1]
    /\ nodes' = [nodes EXCEPT ![n].log =
                    Append(@, <<nodes[n].serving.epoch, budget.published + 1>>)]
    /\ UNCHANGED <<record, net, known, confirmed, forked, settled, clients>>

(* The producer (note 2: "does timeout retry cause duplicate effects?"),   *)
(* timed out on its newest publish, message budget.published, sends it    *)
(* again to n, which serves with admission open. An owner whose history   *)
(* holds the message answers with its position and appends nothing; one  *)
(* that lacks it appends it at its own epoch. Under                       *)
(* retry_without_producer_id it appends whatever it holds. With a client   *)
(* every retry comes from it (ClientRetry).                                *)
RetryPublish(n) ==
    LET m == budget.published
        log == nodes[n].log
        held == \E p \in 1..Len(log) : log[p][2] = m
    IN  /\ CLIENT_HOPS = 0
        /\ budget.publish_retries < PUBLISH_RETRIES
        /\ m > 0
        /\ Serves(n)
        /\ nodes[n].serving.open
        /\ budget' = [budget EXCEPT !.publish_retries = @ + 1]
        /\ nodes' = IF held /\ ~Has("retry_without_producer_id") THEN nodes
                    ELSE [nodes EXCEPT ![n].log =
                             Append(@, <<nodes[n].serving.epoch, m>>)]
        /\ UNCHANGED <<record, net, known, confirmed, forked, settled, clients>>

(* How far copy `to`'s log agrees with sender `from`'s: the common prefix.  *)
(* Under checkpoint_without_epoch_tag the sender kept its checkpoint's     *)
(* position but not the epoch tag of the entry there, so it cannot compare *)
(* that entry and takes a copy at least that long to agree through it.     *)
AgreedPrefix(to, from) ==
    LET tl == nodes[to].log
        fl == nodes[from].log
        c == CommonPrefix(tl, fl)
        b == nodes[from].base
    IN  IF Has("checkpoint_without_epoch_tag") /\ c < b /\ Len(tl) >= b
        \* Taken to agree through b, and then as far as the entries past it
        \* agree, so an append never rewrites an entry the copy holds.
        THEN b + CommonPrefix(SubSeq(tl, b + 1, Len(tl)), SubSeq(fl, b + 1, Len(fl)))
        ELSE c

(* Without messages: `from` ships its next entry to `to` in one step. A    *)
(* refusal tells the stale sender the newer epoch and it stops serving. In *)
(* the impl the receiver also rejects a gap (an entry not right after its  *)
(* common prefix); here the sender always ships exactly the next entry,   *)
(* so no gap can arise. With retention the sender ships only increments    *)
(* above its checkpoint (below it they were reclaimed: InstallCheckpoint   *)
(* first), and a copy never cuts into its own checkpoint, since folded     *)
(* state has no suffix to drop. Under replay_accepts_gap a copy whose      *)
(* agreed prefix c ends below the sender's checkpoint takes the first      *)
(* increment the sender kept past what it holds above the checkpoint:     *)
(* its log is cut there, padded with empty entries (NoEntry) where it      *)
(* holds nothing, and acknowledged through the new entry.                 *)
ReplicateAtomic(from, to) ==
    /\ from # to
    /\ Serves(from)
    /\ LET f == nodes[from]
           tn == nodes[to]
           targets == f.serving.counted \cup record.followers
                        \cup record.learners \cup record.leaving
           epoch == f.serving.epoch
       IN  /\ SlotOf(to) \in targets
           /\ tn.alive
           /\ IF ~Accepts(to, epoch)
              THEN nodes' = [nodes EXCEPT
                               ![from].serving = NoServing,
                               ![from].seen = Max2(@, Max2(tn.seen,
                                                           tn.sealed_at + 1))]
              ELSE LET c == AgreedPrefix(to, from)
                       gap == c < f.base
                       (* Past a gap the copy is taken to agree as far as  *)
                       (* its entries above the checkpoint match.          *)
                       at == IF gap
                             THEN CHOOSE p \in f.base..Len(f.log) :
                                    /\ \A q \in (f.base + 1)..p : At(tn.log, q) = f.log[q]
                                    /\ (p = Len(f.log) \/ At(tn.log, p + 1) # f.log[p + 1])
                             ELSE c
                       kept == IF at < Len(tn.log) THEN at ELSE Len(tn.log)
                   IN  /\ c < Len(f.log)
                       (* An IF: TLC takes each true disjunct of an action *)
                       (* as a step of its own.                            *)
                       /\ IF gap THEN Has("replay_accepts_gap") ELSE TRUE
                       /\ c >= tn.base
                       /\ at < Len(f.log)
                       (* The copy keeps its own first c entries and takes *)
                       (* the sender's next one: the same as the sender's  *)
                       (* first c + 1 when c is the common prefix, but not *)
                       (* under checkpoint_without_epoch_tag, whose agreed *)
                       (* prefix may reach past it. The copy acknowledges  *)
                       (* its new tail, unless it is a follower suspended  *)
                       (* since its restart.                               *)
                       /\ nodes' = [nodes EXCEPT
                             ![to].log = Append(SubSeq(tn.log, 1, kept)
                                                  \o [i \in 1..(at - kept) |-> NoEntry],
                                                f.log[at + 1]),
                             ![to].seen = Max2(@, epoch),
                             ![to].serving = IF @.active /\ @.epoch < epoch
                                             THEN NoServing ELSE @,
                             ![from].serving.acks =
                                 IF SlotOf(to) \notin record.suspended
                                    \/ Has("rejoin_counts_early")
                                 THEN SetAck(@, SlotOf(to), at + 1) ELSE @]
    /\ UNCHANGED <<record, budget, net, known, confirmed, forked, settled, clients>>

(* With messages in flight Replicate sends an append (SendAppend); what    *)
(* the replica does with it is Deliver's. There is no retention with       *)
(* messages (NET => TRUNCATIONS = 0), so every base stays 0 and the append *)
(* path needs no checkpoint guard.                                         *)
Replicate(from, to) ==
    IF NET THEN SendAppend(from, to) ELSE ReplicateAtomic(from, to)

Confirm(n) ==
    /\ Serves(n)
    /\ LET tail == Confirmable(n)
       IN  /\ tail > nodes[n].serving.confirmed
           /\ nodes' = [nodes EXCEPT ![n].serving.confirmed = tail]
           /\ NoteConfirmed(nodes[n].log, tail)
    /\ UNCHANGED <<record, budget, net, known, clients>>

-----------------------------------------------------------------------------
(* Join and move (model/src/protocol/moves.rs)                             *)

(* Step 0: one guarded write adds the target as a learner, for one of two  *)
(* reasons: a counted copy is down or lost (a replacement of the lowest    *)
(* such instance, which its swap must take out; no budget), or a planned   *)
(* move is left (it consumes one). The new copy is told the record's epoch *)
(* and refuses appends of an older one from then on: a copy kept from an   *)
(* earlier stint may be admitted without one append from the current      *)
(* owner (finding 17; learner_keeps_old_epoch leaves its epoch as it was). *)
AddLearner(target) ==
    LET r == record
        slot == SlotOf(target)
        rep == ToReplace
    IN  /\ r.mv.phase = "None"
        /\ r.handoff.phase = "None"
        /\ NoRecoveryForMoves
        /\ IF rep # {} THEN TRUE ELSE PlannedLeft
        (* With messages in flight the controller knows the owner from its *)
        (* record; no progress is needed to start a move. (An IF: TLC      *)
        (* takes each true disjunct of an action as a step of its own.)    *)
        /\ IF NET THEN TRUE ELSE OwnerOk
        /\ target # OwnerNode /\ nodes[target].alive
        /\ slot \notin r.followers \cup r.learners \cup r.eligible \cup r.leaving
        /\ budget' = IF rep # {} THEN budget
                     ELSE [budget EXCEPT !.learner_adds = @ + 1]
        /\ record' = [r EXCEPT !.learners = @ \cup {slot},
                               !.mv = [phase |-> "Learning", target |-> slot,
                                       boundary |-> 0,
                                       replaces |-> IF rep # {}
                                                    THEN {MinSlot(rep)}
                                                    ELSE {}]]
        (* Atomically the learner reports its durable tail to the owner as  *)
        (* it joins, as a re-admitted copy does: one that kept data from an *)
        (* earlier stint may hold the owner's whole log already, and then   *)
        (* no append draws an acknowledgement from it (finding 37).         *)
        /\ LET told == IF Has("learner_keeps_old_epoch") THEN nodes
                       ELSE [nodes EXCEPT ![target].seen = Max2(@, r.epoch)]
           IN  nodes' = IF NET THEN told
                        ELSE [told EXCEPT ![OwnerNode].serving.acks =
                                 SetAck(@, slot, Credit(OwnerNode, target))]
        /\ UNCHANGED <<net, known, confirmed, forked, settled, clients>>

(* Step 0, end: the caught-up learner's instance joins the accepted        *)
(* history; owner, epoch and W unchanged.                                  *)
AdmitLearner(target) ==
    /\ record.mv.phase = "Learning"
    /\ NoRecoveryForMoves
    /\ MoveTargetOk(target)
    /\ SeesCaughtUp(SlotOf(target))
    /\ record' = [record EXCEPT !.eligible = @ \cup {SlotOf(target)},
                                !.mv.phase = "Admitted"]
    /\ UNCHANGED <<nodes, budget, net, known, confirmed, forked, settled, clients>>

(* Step 1: one guarded write moves the target into the followers and       *)
(* marks the leaving copy (lowest instance of node `leaving`) as leaving.  *)
(* `leaving` may be the target's own node: a node back on a fresh disk     *)
(* swaps out its own lost instance. A replacement swaps out the copy it    *)
(* replaces.                                                               *)
Swap(target, leaving) ==
    LET r == record
        slot == SlotOf(target)
        cands == {x \in r.followers : x[1] = leaving /\ x # slot}
    IN  /\ MOVES > 0 \/ r.mv.replaces # {}
        /\ \/ r.mv.phase = "Admitted"
           \/ Has("swap_before_admission") /\ r.mv.phase = "Learning"
        /\ NoRecoveryForMoves
        /\ MoveTargetOk(target)
        /\ SeesOwner
        /\ cands # {}
        /\ r.mv.replaces = {} \/ MinSlot(cands) \in r.mv.replaces
        /\ SeesCaughtUp(slot)
        /\ LET leave == MinSlot(cands)
           IN  record' = [r EXCEPT !.followers = (@ \ {leave}) \cup {slot},
                                   !.learners = @ \ {slot},
                                   !.leaving = {leave},
                                   !.adopted = FALSE,
                                   !.mv.phase = "Swapped"]
        /\ UNCHANGED <<nodes, budget, net, known, confirmed, forked, settled, clients>>

(* Step 1, owner side: the owner adopts the new counted set and records    *)
(* boundary B, its confirmed tail at that moment. In the impl the owner    *)
(* reads the committed record; it never counts from its own guess.         *)
OwnerSwitch ==
    LET r == record
        o == OwnerNode
        tail == OwnerTail
    IN  /\ ~r.adopted
        /\ NoRecoveryForMoves
        /\ OwnerOk
        /\ (/\ r.mv.phase = "Promoted"
            /\ ~Has("promote_without_catchup")
            /\ ~Has("adopt_w_before_catchup")) =>
               (* The owner's own knowledge: without messages the copy's   *)
               (* log, with them what the copy acknowledged to it.         *)
               (IF NET THEN AckOf(nodes[o].serving.acks, r.mv.target) >= tail
                ELSE NodeCovers(r.mv.target[1], o, tail) /\ Current(r.mv.target))
        /\ nodes' = [nodes EXCEPT ![o].serving.counted = r.followers,
                                  ![o].serving.w = Majority(r.rf)]
        /\ record' = [r EXCEPT !.adopted = TRUE,
                               !.rf_served = r.rf,
                               !.mv = CASE r.mv.phase = "Swapped"
                                             -> [@ EXCEPT !.boundary = tail]
                                        [] r.mv.phase = "Promoted" -> NoMove
                                        [] OTHER -> @]
        /\ UNCHANGED <<budget, net, known, confirmed, forked, settled, clients>>

(* Step 2: once the target is durable at or beyond B, one guarded write    *)
(* removes the leaving copy from the assignment and the eligible set.      *)
RemoveLeaving ==
    LET r == record
    IN  /\ r.mv.phase = "Swapped" /\ r.adopted
        /\ NoRecoveryForMoves
        /\ SeesOwner
        /\ \/ Has("remove_before_boundary")
           \/ /\ Current(r.mv.target)
              /\ SeesCovering(r.mv.target, r.mv.boundary)
        /\ record' = [r EXCEPT !.eligible = @ \ r.leaving,
                               !.suspended = @ \ r.leaving,
                               !.leaving = {},
                               !.mv = NoMove]
        /\ UNCHANGED <<nodes, budget, net, known, confirmed, forked, settled, clients>>

(* The operator's cancel before the swap: a budgeted request; no retry.    *)
CancelMove ==
    /\ record.mv.phase \in {"Learning", "Admitted"}
    /\ budget.cancels < CANCELS
    /\ budget' = [budget EXCEPT !.cancels = @ + 1]
    /\ record' = DropLearner(record)
    /\ UNCHANGED <<nodes, net, known, confirmed, forked, settled, clients>>

(* The controller's abort of a move whose target is down or lost: before   *)
(* the swap the learner is dropped; a promotion the owner has not adopted  *)
(* is withdrawn (the owner still confirms on the old counted set and W).   *)
(* A planned move aborted this way earns a retry.                          *)
AbortMove ==
    LET r == record
        t == r.mv.target
    IN  /\ r.mv.phase \in {"Learning", "Admitted", "Promoted"}
        /\ ~r.recovery.pending
        /\ TargetGone
        /\ TargetNotOwner
        /\ IF r.mv.phase = "Promoted"
           THEN /\ record' = [r EXCEPT !.followers = @ \ {t},
                                       !.eligible = @ \ {t},
                                       !.suspended = @ \ {t},
                                       !.rf = @ - 1,
                                       !.adopted = TRUE,
                                       !.mv = NoMove]
                /\ budget' = [budget EXCEPT !.retries = @ + 1]
           ELSE /\ record' = DropLearner(r)
                /\ budget' = RetryFor(budget, r.mv)
        /\ UNCHANGED <<nodes, net, known, confirmed, forked, settled, clients>>

(* The controller's way out of a swapped move whose target is down or      *)
(* lost: the leaving copy kept replicating and stayed eligible, so one     *)
(* guarded write swaps it back in (it must cover the owner's confirmed     *)
(* tail, as any swap target must) and marks the target as leaving.         *)
(* OwnerSwitch then records a new B and RemoveLeaving removes the old      *)
(* target once the copy swapped back covers it.                            *)
SwapBack ==
    LET r == record
        t == r.mv.target
    IN  /\ ~Has("no_swap_back")
        /\ r.mv.phase = "Swapped"
        /\ ~r.recovery.pending
        /\ TargetGone
        /\ TargetNotOwner
        /\ SeesOwner
        /\ r.leaving # {}
        /\ LET back == MinSlot(r.leaving)
           IN  /\ Current(back) /\ nodes[back[1]].alive
               /\ SeesCaughtUp(back)
               /\ record' = [r EXCEPT !.followers = (@ \ {t}) \cup {back},
                                      !.leaving = {t},
                                      !.adopted = FALSE,
                                      !.mv = [phase |-> "Swapped",
                                              target |-> back,
                                              boundary |-> 0,
                                              replaces |-> {}]]
        /\ UNCHANGED <<nodes, budget, net, known, confirmed, forked, settled, clients>>

(* Replication-factor increase: the learner becomes a follower and rf      *)
(* grows; W grows only when the owner adopts it (OwnerSwitch).             *)
PromoteLearner(target) ==
    LET r == record
        slot == SlotOf(target)
    IN  /\ r.mv.phase = "Admitted"
        /\ r.rf < RFMax
        /\ NoRecoveryForMoves
        /\ r.mv.replaces = {}     \* a replacement swaps, it does not promote
        /\ MoveTargetOk(target)
        /\ SeesOwner
        /\ Has("promote_without_catchup") \/ SeesCaughtUp(slot)
        /\ record' = [r EXCEPT !.followers = @ \cup {slot},
                               !.learners = @ \ {slot},
                               !.rf = @ + 1,
                               !.adopted = FALSE,
                               !.mv.phase = "Promoted"]
        /\ UNCHANGED <<nodes, budget, net, known, confirmed, forked, settled, clients>>

-----------------------------------------------------------------------------
(* Planned owner handoff (model/src/protocol/handoff.rs)                   *)

CloseAdmission(to) ==
    LET r == record
        o == OwnerNode
    IN  /\ r.handoff.phase = "None"
        /\ r.mv.phase = "None"
        /\ ~r.recovery.pending
        /\ budget.handoffs < HANDOFFS
        /\ OwnerOk
        /\ nodes[o].serving.open
        /\ to # o /\ nodes[to].alive
        /\ SlotOf(to) \in r.followers /\ SlotOf(to) \notin r.suspended
        /\ budget' = [budget EXCEPT !.handoffs = @ + 1]
        /\ nodes' = IF Has("handoff_without_barrier") THEN nodes
                    ELSE [nodes EXCEPT ![o].serving.open = FALSE]
        /\ record' = [r EXCEPT !.handoff = [phase |-> "Closed", from |-> o,
                                            to |-> to, fin |-> 0,
                                            fin_entry |-> NoEntry]]
        /\ UNCHANGED <<net, known, confirmed, forked, settled, clients>>

(* The owner has drained in-flight work and reports final boundary F.      *)
ReportFinalBoundary ==
    LET h == record.handoff
        o == OwnerNode
        log == nodes[o].log
    IN  /\ h.phase = "Closed"
        /\ OwnerOk
        /\ o = h.from
        /\ nodes[o].serving.confirmed = Len(log)
        /\ record' = [record EXCEPT !.handoff.phase = "Reported",
                                    !.handoff.fin = Len(log),
                                    !.handoff.fin_entry = At(log, Len(log))]
        /\ UNCHANGED <<nodes, budget, net, known, confirmed, forked, settled, clients>>

(* One guarded write commits the new owner at epoch + 1 with a             *)
(* continuation certificate (F and the entry at F). In the impl the        *)
(* controller checks "new owner durable at F" from the new owner's own     *)
(* acknowledgement of F, not from the old owner's view of it.              *)
CommitHandoff ==
    LET r == record
        h == r.handoff
        to == SlotOf(h.to)
    IN  /\ h.phase = "Reported"
        /\ ~r.recovery.pending
        /\ SeesOwner
        /\ OwnerNode = h.from
        /\ to \in r.followers /\ to \notin r.suspended
        \* With messages in flight the controller cannot tell whether the new
        \* owner's process is up (finding 27): its disk holds F, and the
        \* activation waits for it.
        /\ (NET \/ nodes[h.to].alive)
        /\ SeesCovering(to, h.fin)
        /\ record' = [r EXCEPT !.epoch = @ + 1,
                               !.owner = to,
                               !.followers = (@ \ {to}) \cup {r.owner},
                               !.handoff.phase = "Committed"]
        \* Under old_owner_serves_after_commit the old owner takes the commit
        \* for the end of its handoff and reopens admission, as after a cancel.
        /\ nodes' = IF Has("old_owner_serves_after_commit")
                       /\ nodes[h.from].serving.active
                    THEN [nodes EXCEPT ![h.from].serving.open = TRUE]
                    ELSE nodes
        /\ UNCHANGED <<budget, net, known, confirmed, forked, settled, clients>>

(* The new owner activates without seal or inspection.                     *)
ActivateOwner ==
    LET r == record
        h == r.handoff
        nd == nodes[h.to]
        \* The continuation certificate names F and the entry at F.
        certificate == [p \in 1..h.fin |-> IF p = h.fin THEN h.fin_entry
                                                         ELSE NoEntry]
        \* The new owner continues F and nothing past it: an entry it holds
        \* past F is a divergent tail of an older epoch, never confirmed
        \* (finding 33).
        continued == IF Has("handoff_keeps_stale_tail") THEN nd.log
                     ELSE SubSeq(nd.log, 1, h.fin)
    IN  /\ h.phase = "Committed"
        /\ ~r.recovery.pending
        /\ nd.alive /\ SlotOf(h.to) = r.owner
        /\ Covers(nd.log, certificate, h.fin)
        /\ nd.seen <= r.epoch /\ nd.sealed_at < r.epoch
        /\ nodes' = [nodes EXCEPT
                       ![h.to].serving = [active |-> TRUE, epoch |-> r.epoch,
                                          counted |-> r.followers,
                                          w |-> Majority(r.rf), open |-> TRUE,
                                          confirmed |-> h.fin,
                                          via_handoff |-> TRUE, acks |-> {},
                                          floor |-> NoFloor, muted |-> {}],
                       ![h.to].seen = r.epoch,
                       ![h.to].log = continued]
        /\ record' = [r EXCEPT !.handoff = NoHandoff]
        /\ NoteConfirmed(nd.log, h.fin)
        /\ UNCHANGED <<budget, net, known, clients>>

(* End a handoff before its commit; the old owner reopens admission if it  *)
(* still serves at the record's epoch.                                     *)
EndHandoff ==
    LET h == record.handoff
        sv == nodes[h.from].serving
    IN  /\ h.phase \in {"Closed", "Reported"}
        /\ record' = [record EXCEPT !.handoff = NoHandoff]
        /\ nodes' = IF sv.active /\ sv.epoch = record.epoch
                    THEN [nodes EXCEPT ![h.from].serving.open = TRUE]
                    ELSE nodes

(* The operator's cancel before the commit: a budgeted request.            *)
CancelHandoff ==
    /\ record.handoff.phase \in {"Closed", "Reported"}
    /\ budget.cancels < CANCELS
    /\ budget' = [budget EXCEPT !.cancels = @ + 1]
    /\ EndHandoff
    /\ UNCHANGED <<net, known, confirmed, forked, settled, clients>>

(* The controller's abort before the commit, for a reason: the new owner   *)
(* is down or its current instance is no follower (its disk is gone). A    *)
(* failure of the old owner opens a recovery, which cancels the handoff.   *)
AbortHandoff ==
    LET h == record.handoff
    IN  /\ h.phase \in {"Closed", "Reported"}
        /\ ~nodes[h.to].alive \/ SlotOf(h.to) \notin record.followers
        /\ EndHandoff
        /\ UNCHANGED <<budget, net, known, confirmed, forked, settled, clients>>

-----------------------------------------------------------------------------
(* Faults (model/src/protocol/faults.rs)                                   *)

(* The process stops; volatile state is lost, the disk survives. What the *)
(* process knew of its suspension is learned again when it restarts.       *)
Crash(n) ==
    /\ nodes[n].alive
    /\ budget.crashes < CRASHES
    /\ budget' = [budget EXCEPT !.crashes = @ + 1]
    /\ nodes' = [nodes EXCEPT ![n].alive = FALSE, ![n].serving = NoServing,
                              ![n].suspended = FALSE]
    /\ UNCHANGED <<record, net, known, confirmed, forked, settled, clients>>

(* The process comes back, on its old disk or on a fresh one. A follower   *)
(* back on its old disk is suspended until re-admitted; at most W - 1 at   *)
(* once, counting the others: an instance already suspended (it crashed   *)
(* again before it rejoined) keeps the slot it holds. A fresh disk is a    *)
(* new storage instance (gen + 1), unless the storage_identity_ignored     *)
(* mutant takes it for the old one. With messages in flight every restart  *)
(* is a new process incarnation (inc + 1), which its acknowledgements      *)
(* carry, and a follower back on its old disk knows itself suspended (it   *)
(* wrote the suspension): its `suspended` is set until NoticeRejoin.       *)
Restart(n, fresh) ==
    LET nd == nodes[n]
        old == SlotOf(n)
        r == record
        inc == IF NET THEN nd.inc + 1 ELSE nd.inc
    IN  /\ ~nd.alive
        /\ budget.restarts < RESTARTS
        /\ fresh => budget.disk_losses < DISK_LOSSES
        /\ IF fresh
           THEN /\ Has("storage_identity_ignored") \/ nd.gen + 1 < 2
                /\ budget' = [budget EXCEPT !.restarts = @ + 1,
                                            !.disk_losses = @ + 1]
                /\ nodes' = [nodes EXCEPT ![n] =
                       [@ EXCEPT !.log = <<>>, !.base = 0, !.sealed_at = 0,
                                 !.seen = 0,
                                 !.wiped_unbound =
                                     IF Has("storage_identity_ignored")
                                     THEN TRUE ELSE @,
                                 !.gen = IF Has("storage_identity_ignored")
                                         THEN @ ELSE @ + 1,
                                 !.alive = TRUE, !.serving = NoServing,
                                 !.inc = inc]]
                /\ UNCHANGED <<record, net>>
           ELSE /\ budget' = [budget EXCEPT !.restarts = @ + 1]
                /\ IF old \in r.followers
                   THEN /\ LET others ==
                                  IF Has("restart_counts_own_suspension")
                                  THEN CurrentOf(r.suspended)
                                  ELSE CurrentOf(r.suspended) \ {old}
                           IN  Cardinality(others) + 1 < WServed
                        /\ record' = [r EXCEPT !.suspended = @ \cup {old}]
                        (* Its first word to the owner the record names is *)
                        (* the suspension. Without messages that owner     *)
                        (* forgets its progress at once (under             *)
                        (* rejoin_counts_early it takes the reported       *)
                        (* durable length at face value instead); with     *)
                        (* them it is a notice, which may arrive late or   *)
                        (* be lost (a suspended copy's acknowledgements    *)
                        (* repeat it).                                     *)
                        /\ IF NET
                           THEN /\ nodes' = [nodes EXCEPT
                                      ![n].alive = TRUE,
                                      ![n].serving = NoServing,
                                      ![n].inc = inc,
                                      ![n].suspended = TRUE]
                                /\ net' = Send(net, SuspendMsg(OwnerNode, old, inc))
                           ELSE /\ nodes' = [nodes EXCEPT
                                      ![n].alive = TRUE,
                                      ![n].serving = NoServing,
                                      ![OwnerNode].serving.acks =
                                          IF HasCurrentOwner
                                          THEN SetAck(@, old,
                                                  IF Has("rejoin_counts_early")
                                                  THEN Len(nd.log) ELSE 0)
                                          ELSE @]
                                /\ UNCHANGED net
                   ELSE /\ nodes' = [nodes EXCEPT ![n].alive = TRUE,
                                                 ![n].serving = NoServing,
                                                 ![n].inc = inc]
                        /\ UNCHANGED <<record, net>>
        /\ UNCHANGED <<known, confirmed, forked, settled, clients>>

(* A suspended follower, caught up, is re-admitted without a fence.        *)
(* Without messages the controller reads both logs and the copy reports   *)
(* its durable tail to the owner at once. With them the controller has    *)
(* only the owner's report of the copy, not an exact failure detector:     *)
(* the copy may have crashed again since it was reported caught up         *)
(* (finding 21). Its disk survived, so what it acknowledged it still       *)
(* holds; when it comes back it is suspended again. The copy learns of its *)
(* re-admission when it reads the record (NoticeRejoin), the owner when it *)
(* reads the record too (NoticeReadmission, finding 35) or from the copy's *)
(* next acknowledgement, marked admitted.                                  *)
Rejoin(n) ==
    /\ SlotOf(n) \in record.suspended
    /\ ~record.recovery.pending
    /\ IF NET THEN SeesCaughtUp(SlotOf(n))
       ELSE /\ nodes[n].alive
            /\ OwnerOk
            /\ Covers(nodes[n].log, nodes[OwnerNode].log, OwnerTail)
    /\ record' = [record EXCEPT !.suspended = @ \ {SlotOf(n)}]
    /\ IF NET THEN UNCHANGED nodes
       ELSE nodes' = [nodes EXCEPT ![OwnerNode].serving.acks =
                        SetAck(@, SlotOf(n), Credit(OwnerNode, n))]
    /\ UNCHANGED <<budget, net, known, confirmed, forked, settled, clients>>

(* With messages in flight: a copy that knows itself suspended reads the  *)
(* record and finds it is not (re-admitted, or no longer a follower at     *)
(* all); from then on its acknowledgements are marked admitted. The        *)
(* runtime reads the record on its timer; the controller's write does not  *)
(* reach the copy by itself (finding 22).                                  *)
NoticeRejoin(n) ==
    /\ NET
    /\ nodes[n].alive
    /\ nodes[n].suspended
    /\ SlotOf(n) \notin record.suspended
    /\ nodes' = [nodes EXCEPT ![n].suspended = FALSE]
    /\ UNCHANGED <<record, budget, net, known, confirmed, forked, settled, clients>>

(* With messages in flight: the record's owner, serving at the record's    *)
(* epoch, reads the record and unmutes every copy it muted that the record *)
(* no longer suspends (finding 35). Muting is what the owner heard of a    *)
(* suspension (a notice, or an acknowledgement the copy marked suspended); *)
(* the record's re-admission is the controller's decision, taken only once *)
(* the owner reported the copy caught up to the confirmed tail. Reading    *)
(* the record is no message, so nothing between a re-admission and the     *)
(* owner counting the copy again can be lost. Without it the owner learned *)
(* of a re-admission only from the copy's next admitted acknowledgement,   *)
(* and a copy that holds the owner's whole log is sent nothing to          *)
(* acknowledge (finding 32); owner_ignores_readmission never reads it.     *)
NoticeReadmission(n) ==
    LET readmitted == nodes[n].serving.muted \ record.suspended
    IN  /\ NET
        /\ RESTARTS > 0                \* only a restart mutes a copy
        /\ ~Has("owner_ignores_readmission")
        /\ OwnerOk /\ OwnerNode = n
        /\ readmitted # {}
        /\ nodes' = [nodes EXCEPT ![n].serving.muted = @ \ readmitted]
        /\ UNCHANGED <<record, budget, net, known, confirmed, forked, settled,
                       clients>>

-----------------------------------------------------------------------------
(* Recovery (model/src/protocol/recovery.rs)                               *)

(* Seals needed: E - W + 1 of the eligible set, with the W the owner may   *)
(* still be confirming on (the old W until it adopted an rf increase).     *)
SealThreshold ==
    LET e == Cardinality(record.eligible)
        w == IF Has("seal_with_new_w") THEN Majority(record.rf) ELSE WServed
        need == Monus(e + 1, w)
    IN  IF Has("small_seal_quorum") THEN Monus(need, 1) ELSE need

(* Seals that count: of the eligible set, on a disk that still exists (a   *)
(* seal lives on its disk).                                                *)
Seals == CurrentOf(record.recovery.sealed \cap record.eligible)

(* Sealed history a beats b as the recovered tail: a newer last epoch,     *)
(* then a longer log (equal keys mean equal logs: one owner per epoch).    *)
BetterLog(a, b) ==
    \/ LastEpoch(a) > LastEpoch(b)
    \/ LastEpoch(a) = LastEpoch(b) /\ Len(a) > Len(b)

(* Whether a sealed history may be the recovered tail: it holds the tail   *)
(* the last recovery confirmed (record.start, record.start_entry), which   *)
(* every later confirmed history extends (finding 34). A copy can hold a   *)
(* newer last epoch tag than that history and still lack it: an entry its  *)
(* owner wrote that a recovery since left out, while the tail that         *)
(* recovery confirmed kept the older tags of its entries. Under            *)
(* recovery_trusts_last_tag every sealed copy is a candidate.              *)
Candidate(log) ==
    IF Has("recovery_trusts_last_tag") THEN TRUE
    ELSE At(log, record.start) = record.start_entry

(* Inspection: the best sealed history that holds the one the epoch began  *)
(* with (Candidate; then BetterLog), the lowest instance among equals, as  *)
(* the model iterates.                                                     *)
Inspect ==
    LET cands == {s \in Seals : Candidate(nodes[s[1]].log)}
        top == {s \in cands :
                  \A t \in cands : ~BetterLog(nodes[t[1]].log, nodes[s[1]].log)}
    IN  IF cands = {} THEN <<>> ELSE nodes[MinSlot(top)[1]].log

(* The controller opens a pending recovery: the owner crashed, or it is    *)
(* suspected while still alive (zombie). In the impl suspicion comes from  *)
(* a lease or heartbeat timeout; here it is budgeted (SUSPICIONS).         *)
OpenRecovery(zombie) ==
    LET r == record
        ond == nodes[OwnerNode]
        awaitingActivation == r.handoff.phase = "Committed"
        servingNow == ond.serving.active /\ ond.serving.epoch = r.epoch
        r1 == [r EXCEPT !.recovery = [NoRecovery EXCEPT !.pending = TRUE]]
        drops == ~Has("recovery_keeps_move")
                 /\ r.mv.phase \in {"Learning", "Admitted"}
        r2 == IF drops THEN DropLearner(r1) ELSE r1
        (* A planned move the recovery cancels earns a retry. *)
        b1 == IF drops THEN RetryFor(budget, r.mv) ELSE budget
    IN  /\ ~r.recovery.pending
        /\ IF zombie
           THEN /\ budget.suspicions < SUSPICIONS
                /\ ond.alive /\ Current(r.owner)
                /\ budget' = [b1 EXCEPT !.suspicions = @ + 1]
           ELSE /\ \/ ~ond.alive
                   \/ ~Current(r.owner)
                   \/ ~(awaitingActivation \/ servingNow)
                /\ budget' = b1
        (* A handoff before its commit is cancelled; one committed but not *)
        (* activated falls back to this recovery.                          *)
        /\ record' = [r2 EXCEPT !.handoff = NoHandoff]
        /\ UNCHANGED <<nodes, net, known, confirmed, forked, settled, clients>>

(* An eligible replica seals its history at the current epoch. In the impl *)
(* the seal is written to the replica's disk before it answers; a seal     *)
(* that is only in memory would not survive the Restart that follows.      *)
(* With NET the seal is the replica's own guarded write and its history    *)
(* goes with it as evidence (note 1: "B and C seal their history and       *)
(* provide evidence"): the record keeps the best history given so far      *)
(* among the candidates (Candidate; then newest last epoch, then longest:  *)
(* BetterLog), and inspection reads that.                                  *)
Seal(n) ==
    LET slot == SlotOf(n)
        log == nodes[n].log
        rec == record.recovery
        evidence == IF NET /\ ~rec.chosen /\ Candidate(log)
                       /\ BetterLog(log, rec.tail)
                    THEN log ELSE rec.tail
    IN  /\ rec.pending
        /\ nodes[n].alive
        /\ slot \in record.eligible
        /\ slot \notin rec.sealed
        /\ nodes' = [nodes EXCEPT ![n].sealed_at = Max2(@, record.epoch)]
        /\ record' = [record EXCEPT !.recovery.sealed = @ \cup {slot},
                                    !.recovery.tail = evidence]
        /\ UNCHANGED <<budget, net, known, confirmed, forked, settled, clients>>

(* Inspection picks the recovered tail from the sealed copies, once; a     *)
(* sealed replica installs it (a quorum receipt). In the impl the install  *)
(* is a checkpoint bound to a log position followed by gap-rejecting       *)
(* replay (note 2); here it replaces the log in one step. With NET the     *)
(* evidence the seals wrote is the choice, and no sealed copy's log is     *)
(* read.                                                                   *)
InstallRecovered(n) ==
    LET rec == record.recovery
        slot == SlotOf(n)
        tail == IF rec.chosen \/ NET THEN rec.tail ELSE Inspect
    IN  /\ rec.pending
        /\ Cardinality(Seals) >= SealThreshold
        /\ nodes[n].alive /\ slot \in Seals
        /\ slot \notin rec.installed \/ nodes[n].log # tail
        (* A checkpoint cannot be rolled back: the recovered tail must      *)
        (* extend it (it does whenever checkpoints hold only confirmed      *)
        (* history).                                                        *)
        /\ LogCovers(nodes[n].log, tail, nodes[n].base)
        /\ record' = [record EXCEPT !.recovery.chosen = TRUE,
                                    !.recovery.tail = tail,
                                    !.recovery.installed = @ \cup {slot}]
        /\ nodes' = [nodes EXCEPT ![n].log = tail]
        /\ UNCHANGED <<budget, net, known, confirmed, forked, settled, clients>>

(* With E - W + 1 seals and W receipts the candidate activates at          *)
(* epoch + 1. A swap the old owner had not adopted is adopted here with    *)
(* B = the recovered tail; a promotion is completed. A suspended follower  *)
(* that installed the recovered tail and holds it had its history checked  *)
(* as re-admission would check it: activation re-admits it, so its receipt *)
(* counts, it may be the candidate, and it seeds the new owner's acks      *)
(* (finding 10; receipts_skip_suspended keeps the old rule). With NET the  *)
(* activation is the candidate's own guarded write and reads no other      *)
(* copy's log: a receipt says the instance installed the tail, and a       *)
(* sealed instance changes its log only by an install until the new owner  *)
(* exists (or loses it with its disk, which Current sees).                 *)
ActivateRecovery(c) ==
    LET r == record
        rec == r.recovery
        slot == SlotOf(c)
        holds(x) == Current(x)
                    /\ (NET \/ Covers(nodes[x[1]].log, rec.tail, Len(rec.tail)))
        readmitted == IF Has("receipts_skip_suspended") THEN {}
                      ELSE {x \in r.suspended \cap rec.installed : holds(x)}
        suspended == r.suspended \ readmitted
        followers == (r.followers \cup {r.owner}) \ {slot}
        counted == followers \ suspended
        receipts == {x \in rec.installed \cap (counted \cup {slot}) : holds(x)}
        epoch == r.epoch + 1
    IN  /\ rec.pending /\ rec.chosen
        /\ nodes[c].alive /\ slot \in rec.installed
        /\ slot \in (r.followers \cup {r.owner}) \ suspended
        /\ holds(slot)
        /\ Cardinality(receipts) >= Majority(r.rf)
        /\ record' = [r EXCEPT
               !.epoch = epoch,
               !.owner = slot,
               !.followers = followers,
               !.recovery = NoRecovery,
               (* the new epoch begins with the recovered tail *)
               !.start = Len(rec.tail),
               !.start_entry = At(rec.tail, Len(rec.tail)),
               !.suspended = suspended,
               !.rf_served = r.rf,
               !.adopted = TRUE,
               !.mv = IF r.adopted THEN @
                      ELSE CASE r.mv.phase = "Swapped"
                                  -> [@ EXCEPT !.boundary = Len(rec.tail)]
                             [] r.mv.phase = "Promoted" -> NoMove
                             [] OTHER -> @]
        /\ nodes' = [nodes EXCEPT
               ![c].serving = [active |-> TRUE, epoch |-> epoch,
                               counted |-> followers, w |-> Majority(r.rf),
                               open |-> TRUE, confirmed |-> Len(rec.tail),
                               via_handoff |-> FALSE,
                               (* the quorum receipts are its first acks *)
                               acks |-> IF Len(rec.tail) = 0 THEN {}
                                        ELSE {<<x, Len(rec.tail)>> :
                                                x \in (rec.installed \ suspended)
                                                       \ {slot}},
                               floor |-> NoFloor, muted |-> {}],
               ![c].seen = Max2(@, epoch)]
        /\ NoteConfirmed(rec.tail, Len(rec.tail))
        (* With NET the receipts are the controller's first knowledge at  *)
        (* the new epoch, the new owner included (finding 24).             *)
        /\ known' = IF NET /\ ~Has("activation_forgets_receipts")
                    THEN [epoch |-> epoch, confirmed |-> Len(rec.tail),
                          acks |-> IF Len(rec.tail) = 0 THEN {}
                                   ELSE {<<x, Len(rec.tail)>> :
                                           x \in {y \in rec.installed : Current(y)}}]
                    ELSE known
        /\ UNCHANGED <<budget, net, clients>>

-----------------------------------------------------------------------------
(* Retention and checkpoint catch-up (model/src/protocol/retention.rs;     *)
(* note 2, "Snapshots must correspond to a log boundary"). A checkpoint is *)
(* bound to a log position and to the epoch tag of the entry there. Only   *)
(* without messages in flight: every base stays 0 with them.               *)

(* The serving owner takes a checkpoint at its confirmed tail and reclaims *)
(* the increments below it (budgeted). Under truncate_before_confirm it    *)
(* takes it at its log's tail, past what it confirmed, so it reclaims      *)
(* increments a recovery may still discard.                                *)
Truncate(n) ==
    LET at == IF Has("truncate_before_confirm") THEN Len(nodes[n].log)
              ELSE nodes[n].serving.confirmed
    IN  /\ Serves(n)
        /\ budget.truncations < TRUNCATIONS
        /\ at > nodes[n].base
        /\ budget' = [budget EXCEPT !.truncations = @ + 1]
        /\ nodes' = [nodes EXCEPT ![n].base = at]
        /\ UNCHANGED <<record, net, known, confirmed, forked, settled, clients>>

(* Whether copy `to` needs `from`'s checkpoint: it does not hold the entry *)
(* at the checkpoint's position (history compare, by the epoch tag). Under *)
(* checkpoint_without_epoch_tag only whether it is that long; under        *)
(* checkpoint_overwrites_newer also whenever it has not installed a        *)
(* checkpoint this far yet, whatever its own replay already passed, so a   *)
(* copy that applied more is set back to the checkpoint.                   *)
LacksCheckpoint(to, from) ==
    LET b == nodes[from].base
        log == nodes[to].log
    IN  IF Has("checkpoint_without_epoch_tag") THEN Len(log) < b
        ELSE IF Has("checkpoint_overwrites_newer")
        THEN ~LogCovers(log, nodes[from].log, b) \/ nodes[to].base < b
        ELSE ~LogCovers(log, nodes[from].log, b)

(* Owner `from` ships its checkpoint to replica `to`, which lacks the      *)
(* checkpoint's entry: `to`'s log becomes the sender's cut at the          *)
(* checkpoint, with the same base, and replay continues with Replicate. A  *)
(* copy that holds the entry refuses it, so an older checkpoint never      *)
(* overwrites newer state. A copy fenced against the sender's epoch takes  *)
(* nothing (unlike Replicate, nothing tells the sender). The copy          *)
(* acknowledges the checkpoint's position, unless it is a follower         *)
(* suspended since its restart; the acknowledgement is set, not raised,    *)
(* as the model sets it.                                                   *)
InstallCheckpoint(from, to) ==
    /\ from # to
    /\ Serves(from)
    /\ LET f == nodes[from]
           targets == f.serving.counted \cup record.followers
                        \cup record.learners \cup record.leaving
           epoch == f.serving.epoch
           b == f.base
       IN  /\ SlotOf(to) \in targets
           /\ nodes[to].alive
           /\ b > 0
           /\ Accepts(to, epoch)
           /\ LacksCheckpoint(to, from)
           /\ nodes' = [nodes EXCEPT
                 ![to].log = SubSeq(f.log, 1, b),
                 ![to].base = b,
                 ![to].seen = Max2(@, epoch),
                 ![to].serving = IF @.active /\ @.epoch < epoch
                                 THEN NoServing ELSE @,
                 ![from].serving.acks =
                     IF SlotOf(to) \notin record.suspended
                        \/ Has("rejoin_counts_early")
                     THEN SetAck(@, SlotOf(to), b) ELSE @]
    /\ UNCHANGED <<record, budget, net, known, confirmed, forked, settled, clients>>

-----------------------------------------------------------------------------
(* Client routing (model/src/protocol/clients.rs; note 2, "routing         *)
(* publication can have atomic decisions, but clients won't refresh        *)
(* simultaneously", after Redis Cluster's MOVED and ASK). With             *)
(* CLIENT_HOPS > 0 the clients publish every message through their cached *)
(* stable route, follows the answers it gets within CLIENT_HOPS hops,      *)
(* times out and retries with its producer sequence (the message id), and  *)
(* is acknowledged once its publish is confirmed.                          *)

(* A node's answer to the client's request (clients::Reply): "Accept" (it  *)
(* serves at the request's epoch with admission open), "Ask" (this request *)
(* only: go to `node` at `epoch`, asking), "Moved" (the owner is `node` at *)
(* `epoch`: update the stable route, forward in epoch only) or "TryAgain"  *)
(* (send again along the stable route); "None" when no request awaits an   *)
(* answer or its node is down (it answers nothing: the client times out).  *)
Answer(kind, n, e) == [kind |-> kind, node |-> n, epoch |-> e]
NoReply == Answer("None", 0, 0)

(* What the node client k's request is at answers, from its own state: its *)
(* serving state, and the record it watches while it hands off or once it  *)
(* does not serve (MoveModel::reply). The old owner of a committed handoff *)
(* not yet activated answers ASK: the new owner will serve the request at  *)
(* the new epoch, but is not the published owner yet. (Nested IFs: the     *)
(* node is read only once a request is sent.)                              *)
Reply(k) ==
    LET c == clients[k]
        n == c.at
        nd == nodes[n]
        r == record
        h == r.handoff
        e == nd.serving.epoch
        handingOff == h.phase = "Committed" /\ h.from = n
        newerOwner == OwnerNode # n /\ r.epoch > c.epoch
    IN  IF c.phase # "Sent" THEN NoReply
        ELSE IF ~nd.alive THEN NoReply
        ELSE IF Serves(n)
        THEN \* The stale-epoch refusal: n serves at a newer epoch.
             IF c.epoch < e THEN Answer("Moved", n, e)
             \* The client knows a newer epoch than n serves at: n is stale
             \* and must not accept.
             ELSE IF c.epoch > e THEN Answer("TryAgain", 0, 0)
             ELSE IF nd.serving.open THEN Answer("Accept", 0, 0)
             ELSE IF handingOff THEN Answer("Ask", h.to, r.epoch)
             \* Closed: a handoff drains, or it activated its new owner and
             \* n still believes it serves with admission closed.
             ELSE IF r.epoch > e /\ OwnerNode # n
             THEN Answer("Moved", OwnerNode, r.epoch)
             ELSE Answer("TryAgain", 0, 0)
        ELSE IF handingOff THEN Answer("Ask", h.to, r.epoch)
        ELSE IF newerOwner THEN Answer("Moved", OwnerNode, r.epoch)
        ELSE Answer("TryAgain", 0, 0)

(* Send message m along the stable route as a new request (send_request),  *)
(* and end a request unacknowledged (drop_request): the message waits for  *)
(* a retry.                                                                *)
SendRequest(c, m) ==
    [c EXCEPT !.phase = "Sent", !.at = c.route[1], !.epoch = c.route[2],
              !.asking = FALSE, !.hops = 0, !.msg = m]
DropRequest(c) ==
    [c EXCEPT !.phase = "Idle", !.at = 0, !.epoch = 0, !.asking = FALSE,
              !.hops = 0]

(* Whether a log holds message m (the owner's producer record).            *)
HoldsMsg(log, m) == \E p \in 1..Len(log) : log[p][2] = m

(* Client k, with no request in flight, publishes its next message (a     *)
(* new producer sequence) along its stable route, carrying its epoch.      *)
ClientPublish(k) ==
    /\ CLIENT_HOPS > 0
    /\ clients[k].phase = "Idle"
    /\ budget.published < MESSAGES
    /\ budget' = [budget EXCEPT !.published = @ + 1]
    /\ clients' = [clients EXCEPT ![k] = SendRequest(@, budget.published + 1)]
    /\ UNCHANGED <<nodes, record, net, known, confirmed, forked, settled>>

(* The client, whose last request timed out or gave up unacknowledged,     *)
(* sends the same message again along its stable route (budgeted by        *)
(* PUBLISH_RETRIES).                                                       *)
ClientRetry(k) ==
    /\ CLIENT_HOPS > 0
    /\ clients[k].phase = "Idle"
    /\ clients[k].msg > 0 /\ clients[k].msg \notin clients[k].acked
    /\ budget.publish_retries < PUBLISH_RETRIES
    /\ budget' = [budget EXCEPT !.publish_retries = @ + 1]
    /\ clients' = [clients EXCEPT ![k] = SendRequest(@, @.msg)]
    /\ UNCHANGED <<nodes, record, net, known, confirmed, forked, settled>>

(* The node the request is at answers it (answer_client). An acceptance    *)
(* appends the message at the node's epoch unless its history holds it     *)
(* (retry_without_producer_id appends it anyway). A MOVED is news about    *)
(* ownership, whether or not the request goes on: a newer epoch becomes    *)
(* the stable route. Every other answer costs one hop, and a request at    *)
(* the hop limit gives up instead; an ASK sends the request on with        *)
(* ASKING and leaves the stable route alone (ask_updates_route writes the  *)
(* ASK's node into it), the others send it along the stable route. Under   *)
(* no_hop_limit the count stops at CLIENT_HOPS + 1 (beyond the limit is    *)
(* all the property needs, and the state space stays finite), and an       *)
(* answer that then changes nothing is no step.                            *)
AnswerClient(k) ==
    LET c == clients[k]
        rp == Reply(k)
        n == c.at
        route == IF rp.kind = "Moved" /\ rp.epoch > c.route[2]
                 THEN <<rp.node, rp.epoch>> ELSE c.route
        hops == Min2(c.hops + 1, CLIENT_HOPS + 1)
        onward ==
            IF rp.kind = "Ask"
            THEN [c EXCEPT !.hops = hops, !.at = rp.node, !.epoch = rp.epoch,
                           !.asking = TRUE,
                           !.route = IF Has("ask_updates_route")
                                     THEN <<rp.node, rp.epoch>> ELSE @]
            ELSE [c EXCEPT !.hops = hops, !.route = route, !.at = route[1],
                           !.epoch = route[2], !.asking = FALSE]
    IN  /\ rp.kind # "None"
        /\ IF rp.kind = "Accept"
           THEN /\ nodes' = IF ~HoldsMsg(nodes[n].log, c.msg)
                               \/ Has("retry_without_producer_id")
                            THEN [nodes EXCEPT ![n].log =
                                     Append(@, <<nodes[n].serving.epoch, c.msg>>)]
                            ELSE nodes
                /\ clients' = [clients EXCEPT ![k] = [c EXCEPT !.phase = "Accepted"]]
           ELSE /\ IF c.hops >= CLIENT_HOPS /\ ~Has("no_hop_limit")
                   THEN clients' = [clients EXCEPT
                                       ![k] = DropRequest([c EXCEPT !.route = route])]
                   ELSE /\ onward # c
                        /\ clients' = [clients EXCEPT ![k] = onward]
                /\ UNCHANGED nodes
        /\ UNCHANGED <<record, budget, net, known, confirmed, forked, settled>>

(* The position of client k's accepted message in the log of the node     *)
(* that accepted it, its first copy there (acked_position); 0 if it lacks  *)
(* it.                                                                     *)
AckedPosition(k) ==
    LET log == nodes[clients[k].at].log
        ps == {p \in 1..Len(log) : log[p][2] = clients[k].msg}
    IN  IF ps = {} THEN 0 ELSE CHOOSE p \in ps : \A q \in ps : p <= q

(* The node that accepted the request acknowledges it, once it serves and  *)
(* its confirmed tail covers the message (ack_before_confirm: as soon as   *)
(* it holds it). The request ends and the client carries no message.       *)
AckClient(k) ==
    LET c == clients[k]
        p == AckedPosition(k)
    IN  /\ c.phase = "Accepted"
        /\ Serves(c.at)
        /\ p > 0
        /\ p <= nodes[c.at].serving.confirmed \/ Has("ack_before_confirm")
        /\ clients' = [clients EXCEPT ![k] = [DropRequest(c) EXCEPT
                                                 !.acked = @ \cup {c.msg},
                                                 !.msg = 0]]
        /\ UNCHANGED <<nodes, record, budget, net, known, confirmed, forked, settled>>

(* The client's deadline passes on its request (the node is down, the      *)
(* answer or the acknowledgement is late or lost): it drops the request    *)
(* and refreshes its stable route from the control plane's record, forward *)
(* in epoch only.                                                          *)
ClientTimeout(k) ==
    LET c == clients[k]
        d == DropRequest(c)
    IN  /\ c.phase # "Idle"
        /\ clients' = [clients EXCEPT
                          ![k] = IF record.epoch > c.route[2]
                                 THEN [d EXCEPT !.route = <<OwnerNode, record.epoch>>]
                                 ELSE d]
        /\ UNCHANGED <<nodes, record, budget, net, known, confirmed, forked, settled>>

-----------------------------------------------------------------------------
(* Consumer settles (model/src/protocol/consumer.rs; note 2, "deletions    *)
(* must propagate as log events or tombstones, and cannot be assumed       *)
(* synchronized just because the target hasn't seen the record"). A       *)
(* settle is a log entry under the confirm rule; the consumer is told it   *)
(* is done once an owner confirms it (NoteConfirmed).                      *)

(* Whether some entry of `log` settles message m (consumer::settled_in).   *)
SettledIn(log, m) == \E p \in 1..Len(log) : IsSettle(log[p]) /\ SettledMsg(log[p]) = m

(* The positions of the messages owner n delivers: publishes within its    *)
(* confirmed tail whose message no entry of its log settles.               *)
DeliveredAt(n) ==
    LET log == nodes[n].log
    IN  {p \in 1..nodes[n].serving.confirmed :
           /\ At(log, p)[2] > 0 /\ At(log, p)[2] < SettleBit
           /\ ~SettledIn(log, At(log, p)[2])}

(* The consumer settles the oldest message owner n delivered: the owner,   *)
(* serving with admission open, appends a settle entry at its epoch        *)
(* (budgeted by SETTLES). Under settle_acked_before_confirm the consumer   *)
(* is told at once, before any copy holds the settle.                      *)
Settle(n) ==
    /\ Serves(n)
    /\ budget.settles < SETTLES
    /\ nodes[n].serving.open
    /\ DeliveredAt(n) # {}
    /\ LET p == CHOOSE q \in DeliveredAt(n) : \A r \in DeliveredAt(n) : q <= r
           m == nodes[n].log[p][2]
       IN  /\ budget' = [budget EXCEPT !.settles = @ + 1]
           /\ nodes' = [nodes EXCEPT ![n].log =
                           Append(@, SettleEntry(nodes[n].serving.epoch, m))]
           /\ settled' = IF Has("settle_acked_before_confirm")
                         THEN settled \cup {m} ELSE settled
    /\ UNCHANGED <<record, net, known, confirmed, forked, clients>>

-----------------------------------------------------------------------------
(* The next-state relation: the model's alphabet (Action::alphabet).       *)

Next ==
    \/ \E n \in Nodes : Publish(n) \/ Confirm(n)
    \/ \E from, to \in Nodes : from # to /\ Replicate(from, to)
    \/ \E t \in Nodes : AddLearner(t) \/ AdmitLearner(t) \/ PromoteLearner(t)
    \/ \E t, l \in Nodes : Swap(t, l)
    \/ OwnerSwitch \/ RemoveLeaving \/ CancelMove \/ AbortMove \/ SwapBack
    \/ \E t \in Nodes : CloseAdmission(t)
    \/ ReportFinalBoundary \/ CommitHandoff \/ ActivateOwner \/ CancelHandoff
    \/ AbortHandoff
    \/ \E n \in Nodes : Crash(n) \/ Rejoin(n) \/ NoticeRejoin(n)
                        \/ NoticeReadmission(n)
    \/ \E n \in Nodes, fresh \in BOOLEAN : Restart(n, fresh)
    \/ \E zombie \in BOOLEAN : OpenRecovery(zombie)
    \/ \E n \in Nodes : Seal(n) \/ InstallRecovered(n) \/ ActivateRecovery(n)
    \/ \E from, of \in Nodes : from # of /\ ReportProgress(from, of)
    \/ \E m \in InFlight(net) : Deliver(m) \/ Drop(m) \/ Duplicate(m)
    \/ \E n \in Nodes : Truncate(n)
    \/ \E from, to \in Nodes : from # to /\ InstallCheckpoint(from, to)
    \/ \E n \in Nodes : RetryPublish(n)
    \/ \E k \in 1..CLIENTS :
           ClientPublish(k) \/ ClientRetry(k) \/ AnswerClient(k) \/ AckClient(k)
           \/ ClientTimeout(k)
    \/ \E n \in Nodes : Settle(n)

Spec == Init /\ [][Next]_vars

(* For the leads-to form of the eventually properties: every path is       *)
(* bounded by the budgets, so under weak fairness every behaviour of the   *)
(* protocol ends in a terminal state; a mutant's cycle is a behaviour that *)
(* never does, which only this form sees.                                  *)
LiveSpec == Spec /\ WF_vars(Next)

Terminal == ~ENABLED Next

-----------------------------------------------------------------------------
(* Properties (model/src/properties.rs), named after their sentences.      *)
(* Outcomes: what a client of the queue observes.                          *)

(* "no confirmed entry is lost": every confirmed entry is durable on at    *)
(* least W eligible instances (W of the rf the owner confirms on), less    *)
(* one for each eligible instance whose disk is gone, never below one; and *)
(* the owner serving at the record's epoch holds it.                       *)
NoConfirmedEntryIsLost ==
    LET r == record
        lost == Cardinality({i \in r.eligible :
                               ~Current(i) \/ nodes[i[1]].wiped_unbound})
        need == Max2(Monus(Majority(r.rf_served), lost), 1)
    IN  \A p \in 1..Len(confirmed) :
            /\ Cardinality({i \in CurrentOf(r.eligible) :
                              At(nodes[i[1]].log, p) = confirmed[p]}) >= need
            /\ HasCurrentOwner => At(nodes[OwnerNode].log, p) = confirmed[p]

(* "one confirmed history": never two different entries confirmed at one  *)
(* position.                                                               *)
OneConfirmedHistory == ~forked

(* "a stale owner never confirms what the current owner lacks": an owner   *)
(* still able to act at an older epoch has confirmed nothing that the      *)
(* current owner's log lacks.                                              *)
AStaleOwnerNeverConfirmsWhatTheCurrentOwnerLacks ==
    HasCurrentOwner =>
        \A n \in Nodes :
            (Serves(n) /\ nodes[n].serving.epoch < record.epoch) =>
                \A p \in 1..nodes[n].serving.confirmed :
                    At(nodes[OwnerNode].log, p) = At(nodes[n].log, p)

(* "a committed handoff's new owner holds F and its old owner accepted     *)
(* nothing after it" (note 2: the barrier Lcut must not grow).             *)
ACommittedHandoffsNewOwnerHoldsFAndItsOldOwnerAcceptedNothingAfterIt ==
    LET h == record.handoff
        new == nodes[h.to].log
        old == nodes[h.from].log
    IN  h.phase = "Committed" =>
            /\ h.fin = 0 \/ (Len(new) >= h.fin /\ At(new, h.fin) = h.fin_entry)
            /\ \A p \in (h.fin + 1)..Len(old) : EpochOf(old[p]) # record.epoch - 1

(* "no copy holds one message twice": no log holds one message id at two   *)
(* positions; a consumer reading any copy, or an owner activated from it,  *)
(* would deliver it twice (note 2: "writing the same version repeatedly    *)
(* should be identifiable").                                               *)
NoCopyHoldsOneMessageTwice ==
    \A n \in Nodes :
        LET log == nodes[n].log
        IN  \A p, q \in 1..Len(log) : p < q => log[p][2] # log[q][2]

(* "a retried publish is in the confirmed history at most once": no        *)
(* message id is confirmed at two positions, so a producer that retried    *)
(* after a timeout sees its publish delivered once.                        *)
ARetriedPublishIsInTheConfirmedHistoryAtMostOnce ==
    \A p, q \in 1..Len(confirmed) : p < q => confirmed[p][2] # confirmed[q][2]

(* "no copy drops a confirmed entry it holds, except with its disk": a     *)
(* step never takes a confirmed entry (confirmed before the step) away     *)
(* from a copy whose log held it at its position, unless the step is that  *)
(* node's restart on a fresh disk (note 2: "could an older record in the   *)
(* snapshot overwrite a newer value that arrived first?"). An outcome on   *)
(* steps, checked as an action property; the restart is recognised by     *)
(* evaluating Restart(n, TRUE) on the step, as the model reads the label.  *)
NoCopyDropsAConfirmedEntryItHoldsExceptWithItsDiskStep ==
    \A n \in Nodes :
        (\E p \in 1..Len(confirmed) :
            /\ At(nodes[n].log, p) = confirmed[p]
            /\ At(nodes'[n].log, p) # confirmed[p])
        => Restart(n, TRUE)
NoCopyDropsAConfirmedEntryItHoldsExceptWithItsDisk ==
    [][NoCopyDropsAConfirmedEntryItHoldsExceptWithItsDiskStep]_vars

(* Whether message m is in the confirmed history.                          *)
InConfirmedHistory(m) == \E p \in 1..Len(confirmed) : confirmed[p][2] = m

(* "a client's publish is acknowledged only after it is confirmed": at the *)
(* acknowledgement the message is in the confirmed history, at or below    *)
(* the confirmed tail of the node that accepted it, where that node's log  *)
(* holds the confirmed entry. That node need not be the record's owner: an *)
(* owner a recovery superseded may still truthfully confirm an entry W     *)
(* copies held before the seals, and that entry is in the recovered        *)
(* history. An outcome on steps, checked as an action property.            *)
AClientsPublishIsAcknowledgedOnlyAfterItIsConfirmedStep ==
    \A k \in 1..CLIENTS : AckClient(k) =>
        LET n == clients[k].at
            p == AckedPosition(k)
        IN  /\ p > 0
            /\ p <= nodes[n].serving.confirmed
            /\ At(confirmed, p) = At(nodes[n].log, p)
            /\ InConfirmedHistory(clients[k].msg)
AClientsPublishIsAcknowledgedOnlyAfterItIsConfirmed ==
    [][AClientsPublishIsAcknowledgedOnlyAfterItIsConfirmedStep]_vars

(* "no publish acknowledged to a client is lost": every message            *)
(* acknowledged to a client is in the confirmed history, and the owner     *)
(* serving at the record's epoch holds it.                                 *)
NoPublishAcknowledgedToAClientIsLost ==
    \A k \in 1..CLIENTS : \A m \in clients[k].acked :
        /\ InConfirmedHistory(m)
        /\ HasCurrentOwner => HoldsMsg(nodes[OwnerNode].log, m)

(* "an ASK never changes a client's stable route" (note 2: "upon           *)
(* receiving ASK, only a one-time retry plan is generated for the          *)
(* target"): an AnswerClient step that answers ASK leaves the route as it  *)
(* was.                                                                    *)
AnASKNeverChangesAClientsStableRouteStep ==
    \A k \in 1..CLIENTS :
        (AnswerClient(k) /\ Reply(k).kind = "Ask") => clients'[k].route = clients[k].route
AnASKNeverChangesAClientsStableRoute ==
    [][AnASKNeverChangesAClientsStableRouteStep]_vars

(* "every redirect chain ends within the hop limit" (note 2: "redirects    *)
(* and forwards must also limit the number of hops to prevent two nodes    *)
(* from pointing to each other in a loop").                                *)
EveryRedirectChainEndsWithinTheHopLimit ==
    \A k \in 1..CLIENTS : clients[k].hops <= CLIENT_HOPS

(* "a settled message is never delivered again after its settle is        *)
(* confirmed" (note 2: "how are deletions synchronized?"): the owner       *)
(* serving at the record's epoch delivers no message the consumer was told *)
(* is settled; every such message is either not published within its      *)
(* confirmed tail or settled somewhere in its log.                         *)
ASettledMessageIsNeverDeliveredAgainAfterItsSettleIsConfirmed ==
    HasCurrentOwner =>
        LET nd == nodes[OwnerNode]
        IN  \A m \in settled :
                \/ ~\E p \in 1..nd.serving.confirmed : PublishesMsg(At(nd.log, p), m)
                \/ SettledIn(nd.log, m)

(* "no copy applies a gap" (note 2: "log gap detected; cannot skip"): no   *)
(* log holds an empty position below its tail.                             *)
NoCopyAppliesAGap ==
    \A n \in Nodes : \A p \in 1..Len(nodes[n].log) : nodes[n].log[p] # NoEntry

(* Rules: a guard of the protocol restated as an invariant.                *)

(* "W comes from the configured replication factor".                       *)
WComesFromTheConfiguredReplicationFactor ==
    HasCurrentOwner => EffectiveW(OwnerNode) = Majority(record.rf_served)

(* "the owner counts only committed, eligible, unsuspended followers": it  *)
(* holds no acknowledgement from a suspended follower. With messages in    *)
(* flight the owner can know of a suspension only once the notice (or a    *)
(* marked acknowledgement) reached it, so the clause speaks of the         *)
(* suspensions it heard of: its floor for the follower's node has reached  *)
(* the node's incarnation.                                                 *)
TheOwnerCountsOnlyCommittedEligibleUnsuspendedFollowers ==
    LET r == record
        sv == nodes[OwnerNode].serving
        c == CountedForConfirm(OwnerNode)
        unheard(x) == NET /\ sv.floor[x[1]] < nodes[x[1]].inc
    IN  HasCurrentOwner =>
            /\ c \subseteq r.eligible
            /\ c \cap r.learners = {}
            /\ \A x \in c \cap r.suspended : AckOf(sv.acks, x) = 0 \/ unheard(x)
            /\ c \subseteq r.followers \cup r.leaving

(* "no move step or uncommitted handoff while a recovery is pending".      *)
NoMoveStepOrUncommittedHandoffWhileARecoveryIsPending ==
    record.recovery.pending =>
        /\ record.mv.phase \notin {"Learning", "Admitted"}
        /\ record.handoff.phase = "None"

(* "at most W - 1 followers are suspended at once".                        *)
(* Counted on disks that still exist: a lost instance never rejoins, so it *)
(* holds no rejoin slot (finding 36).                                      *)
AtMostWMinus1FollowersAreSuspendedAtOnce ==
    Cardinality(CurrentOf(record.suspended)) < WServed

(* "a checkpoint holds only confirmed history": the entry at a copy's     *)
(* checkpoint position is the confirmed entry there (note 1's retention:   *)
(* the owner truncates only below a boundary it confirmed).                *)
ACheckpointHoldsOnlyConfirmedHistory ==
    \A n \in Nodes :
        nodes[n].base = 0 \/ LogCovers(confirmed, nodes[n].log, nodes[n].base)

(* Rules about steps (edge properties), checked as action properties.      *)

(* "removal waits for the target to cover B".                              *)
(* B is the owner's confirmed tail when it switched, so this is the        *)
(* owner's history through B; it is read from the history variable        *)
(* because the owner may be down when the controller acts on its report.   *)
RemovalWaitsForTheTargetToCoverBStep ==
    RemoveLeaving =>
        /\ Current(record.mv.target)
        /\ LogCovers(nodes[record.mv.target[1]].log, confirmed,
                     record.mv.boundary)
RemovalWaitsForTheTargetToCoverB ==
    [][RemovalWaitsForTheTargetToCoverBStep]_vars

(* "fencing is enforced where writes are accepted": an append lands only   *)
(* on a replica that has seen no newer epoch than the sender's and has not *)
(* sealed at or above it: in a Replicate step without messages, in the     *)
(* delivery of an append with them.                                        *)
FencingIsEnforcedWhereWritesAreAcceptedStep ==
    /\ \A from, to \in Nodes :
          (from # to /\ Replicate(from, to) /\ nodes'[to].log # nodes[to].log) =>
              /\ nodes[from].serving.epoch >= nodes[to].seen
              /\ nodes[from].serving.epoch > nodes[to].sealed_at
    /\ \A m \in InFlight(net) :
          LET to == Dest(m)
          IN  (m.kind = "Append" /\ Deliver(m) /\ nodes'[to].log # nodes[to].log) =>
                  /\ m.epoch >= nodes[to].seen
                  /\ m.epoch > nodes[to].sealed_at
FencingIsEnforcedWhereWritesAreAccepted ==
    [][FencingIsEnforcedWhereWritesAreAcceptedStep]_vars

(* "a refused owner stops serving": with messages in flight, a node        *)
(* serving at an older epoch than a refusal tells it stops serving when    *)
(* the refusal is delivered (note 2: a node that sees a newer epoch stops  *)
(* serving).                                                               *)
ARefusedOwnerStopsServingStep ==
    \A m \in InFlight(net) :
        (m.kind = "Refuse" /\ Deliver(m)) =>
            ~(/\ nodes[m.to].serving.active
              /\ nodes[m.to].serving.epoch < m.epoch
              /\ nodes'[m.to].serving.active)
ARefusedOwnerStopsServing == [][ARefusedOwnerStopsServingStep]_vars

(* "messages in flight stay below the network's capacity": the Rust model  *)
(* keeps at most NetCapacity messages in a fixed-size multiset and no step  *)
(* leaves a state that fills it; here the bag is unbounded, and this        *)
(* invariant flags the same state. Every sender keeps a window (one message *)
(* per link, one report per owner with its refusal, finding 23), so the     *)
(* checked configurations stay far below it.                                *)
NetCapacity == 12
MessagesInFlightStayBelowTheNetworksCapacity ==
    NET => BagCardinality(net) < NetCapacity

(* Eventually (progress under faults) on terminal states, as the Rust      *)
(* checker does: a terminal state is one where no action is enabled, where *)
(* the system rests once the budgeted faults stop. Each property has a     *)
(* scope (the terminal states it speaks to: at most Tolerated copies down, *)
(* and whatever else it names) and a goal; it is violated by a terminal    *)
(* state in its scope that misses its goal. The paired ...Leads formulas   *)
(* are the same properties as TLA+ leads-to, checked under LiveSpec; on an *)
(* acyclic graph the two forms agree.                                      *)

(* How many copies may be down while the partition must still make         *)
(* progress: recovery needs E - W + 1 seals (at most W - 1 eligible copies *)
(* down) and W quorum receipts from the rf counted copies (at most rf - W  *)
(* down); both hold within min(W - 1, rf - W), with the rf and W the owner *)
(* confirms on: 1 at rf 3 and at rf 4, 2 at rf 5.                          *)
Tolerated ==
    LET rf == record.rf_served
        w == Majority(rf)
    IN  Min2(w - 1, rf - w)

(* Copies down: instances of the record (owner, followers, eligible set)   *)
(* whose node is down or whose disk is gone.                               *)
CopiesDown ==
    Cardinality({i \in record.eligible \cup record.followers \cup {record.owner} :
                   ~Current(i) \/ ~nodes[i[1]].alive})

(* Scopes.                                                                 *)
WithinTolerance == CopiesDown <= Tolerated
WholeInScope ==
    WithinTolerance /\ Cardinality({n \in Nodes : nodes[n].alive}) >= record.rf
PlannedInScope ==
    LET r == record
        replicas == r.followers \cup r.learners \cup r.eligible \cup r.leaving
                      \cup {r.owner}
    IN  WithinTolerance /\ \E n \in Nodes : nodes[n].alive /\ SlotOf(n) \notin replicas

(* Goals.                                                                  *)
RecoverySettled == ~record.recovery.pending
MoveSettled == record.mv.phase = "None"
HandoffSettled == record.handoff.phase = "None"
(* Whole again: an owner serving at the record's epoch and rf counted      *)
(* copies, each alive on its current disk, none suspended, nothing leaving *)
(* and no learner (note 1: a lost follower is replaced by step 0 and a     *)
(* swap).                                                                  *)
PartitionWhole ==
    LET r == record
        counted == r.followers \cup {r.owner}
    IN  /\ HasCurrentOwner
        /\ Cardinality(counted) = r.rf
        /\ \A i \in counted : Current(i) /\ nodes[i[1]].alive
        /\ r.suspended = {} /\ r.leaving = {} /\ r.learners = {}
(* A node is down at rest only if no restart is left to bring it back      *)
(* (note 1: "at most W - 1 rejoin at once" delays a restart, it does not   *)
(* forbid it).                                                             *)
RestartsAdmitted ==
    budget.restarts >= RESTARTS \/ \A n \in Nodes : nodes[n].alive
(* A whole partition's owner has confirmed every entry it holds (finding   *)
(* 32: what the owner accepted never waits in a partition that is whole).  *)
AcceptedConfirmed ==
    PartitionWhole =>
        nodes[OwnerNode].serving.confirmed >= Len(nodes[OwnerNode].log)
(* Every planned move, and every retry earned, was started (note 1,        *)
(* recovery story, step 08: a move is retried after the recovery).         *)
PlannedMovesDone == budget.learner_adds >= MOVES + RF_INCREASES + budget.retries

(* Each property as "scope implies goal", on terminal states and as        *)
(* leads-to.                                                               *)
RecoveryOk == ~WithinTolerance \/ RecoverySettled
MoveOk == ~WithinTolerance \/ MoveSettled
HandoffOk == ~WithinTolerance \/ HandoffSettled
WholeOk == ~WholeInScope \/ PartitionWhole
RestartsOk == ~WithinTolerance \/ RestartsAdmitted
AcceptedOk == ~WholeInScope \/ AcceptedConfirmed
PlannedOk == ~PlannedInScope \/ PlannedMovesDone

(* "a pending recovery activates": seals from E - W + 1 eligible copies    *)
(* and receipts from W counted copies, a suspended follower's included.    *)
APendingRecoveryActivates == RecoveryOk \/ ~Terminal
APendingRecoveryActivatesLeads == ~RecoveryOk ~> RecoveryOk

(* "a started move completes or is cancelled" (by the operator, or by the  *)
(* controller for a reason).                                               *)
AStartedMoveCompletesOrIsCancelled == MoveOk \/ ~Terminal
AStartedMoveCompletesOrIsCancelledLeads == ~MoveOk ~> MoveOk

(* "a started handoff commits or is cancelled".                            *)
AStartedHandoffCommitsOrIsCancelled == HandoffOk \/ ~Terminal
AStartedHandoffCommitsOrIsCancelledLeads == ~HandoffOk ~> HandoffOk

(* "the partition rests with rf counted copies on live, current instances" *)
(* when at least rf nodes are up to hold them.                             *)
ThePartitionRestsWithRfCountedCopiesOnLiveCurrentInstances ==
    WholeOk \/ ~Terminal
ThePartitionRestsWithRfCountedCopiesOnLiveCurrentInstancesLeads ==
    ~WholeOk ~> WholeOk

(* "what the owner accepted is confirmed once the partition is whole".      *)
WhatTheOwnerAcceptedIsConfirmedOnceThePartitionIsWhole == AcceptedOk \/ ~Terminal
WhatTheOwnerAcceptedIsConfirmedOnceThePartitionIsWholeLeads == ~AcceptedOk ~> AcceptedOk

(* "a process that restarts is let back in".                               *)
AProcessThatRestartsIsLetBackIn == RestartsOk \/ ~Terminal
AProcessThatRestartsIsLetBackInLeads == ~RestartsOk ~> RestartsOk

(* "a planned move is carried out while a free node can take it".         *)
APlannedMoveIsCarriedOutWhileAFreeNodeCanTakeIt == PlannedOk \/ ~Terminal
APlannedMoveIsCarriedOutWhileAFreeNodeCanTakeItLeads == ~PlannedOk ~> PlannedOk

-----------------------------------------------------------------------------
(* Reachability (`sometimes`): each is a step predicate; TLC checks it by  *)
(* the action property Never<Name> == [][~<Name>]_vars in a separate run,  *)
(* and a violation of Never<Name> is the example that reaches it.          *)

(* A Confirm step of node n that advances its confirmed tail.              *)
ConfirmAdvances(n) ==
    Confirm(n) /\ nodes'[n].serving.confirmed > nodes[n].serving.confirmed

(* "a move completes past a confirmed boundary": step 2 with data in play,  *)
(* after the owner recorded a non-zero B.                                  *)
AMoveCompletesPastAConfirmedBoundary ==
    RemoveLeaving /\ record.mv.boundary > 0

(* "a confirm is counted from the new set after a swap".                   *)
AConfirmIsCountedFromTheNewSetAfterASwap ==
    \E n \in Nodes :
        /\ ConfirmAdvances(n)
        /\ record.mv.phase = "Swapped" /\ record.adopted
        /\ LogCovers(nodes[record.mv.target[1]].log, nodes[n].log,
                     nodes'[n].serving.confirmed)

(* "a recovery cancels a move in progress".                                *)
ARecoveryCancelsAMoveInProgress ==
    /\ \E z \in BOOLEAN : OpenRecovery(z)
    /\ record.mv.phase \in {"Learning", "Admitted"}
    /\ record'.mv.phase = "None"

(* "a recovery activates".                                                 *)
ARecoveryActivates == \E c \in Nodes : ActivateRecovery(c)

(* "a handoff commits and the new owner confirms".                         *)
AHandoffCommitsAndTheNewOwnerConfirms ==
    \E n \in Nodes : ConfirmAdvances(n) /\ nodes[n].serving.via_handoff

(* "a handoff is cancelled and admission reopens", by the operator or by   *)
(* the controller.                                                         *)
AHandoffIsCancelledAndAdmissionReopens ==
    (CancelHandoff \/ AbortHandoff) /\ nodes'[record.handoff.from].serving.open

(* "a restarted follower rejoins without a fence".                         *)
ARestartedFollowerRejoinsWithoutAFence ==
    /\ \E n \in Nodes : Rejoin(n)
    /\ record.epoch = 1 /\ ~record.recovery.pending

(* "a zombie owner is refused": its append is refused by a fenced replica  *)
(* and it stops serving (with messages in flight: the refusal reaches it). *)
AZombieOwnerIsRefused ==
    \/ \E from, to \in Nodes :
          /\ from # to /\ Replicate(from, to)
          /\ nodes[from].serving.active /\ ~nodes'[from].serving.active
    \/ \E m \in InFlight(net) :
          /\ m.kind = "Refuse" /\ Deliver(m)
          /\ nodes[m.to].serving.active /\ ~nodes'[m.to].serving.active

(* "RF increases and a confirm uses the new W".                            *)
RFIncreasesAndAConfirmUsesTheNewW ==
    \E n \in Nodes : ConfirmAdvances(n) /\ nodes[n].serving.w = Majority(RFMax)

(* "a publish is confirmed while a learner catches up and one follower is  *)
(* down": the newly confirmed entry is one the down follower never stored. *)
APublishIsConfirmedWhileALearnerCatchesUpAndOneFollowerIsDown ==
    \E n \in Nodes :
        /\ ConfirmAdvances(n)
        /\ record.learners # {}
        /\ \E f \in record.followers :
               /\ ~nodes[f[1]].alive
               /\ ~LogCovers(nodes[f[1]].log, nodes'[n].log,
                             nodes'[n].serving.confirmed)

(* "a lost follower is swapped out for a new copy".                        *)
ALostFollowerIsSwappedOutForANewCopy ==
    /\ \E t, l \in Nodes : Swap(t, l)
    /\ \E x \in record'.leaving : ~Current(x)

(* "a drained node leaves the partition".                                  *)
ADrainedNodeLeavesThePartition ==
    RemoveLeaving /\ \E l \in record.leaving : l[1] = 1

(* "the leaving copy is swapped back for a target lost after the swap".   *)
TheLeavingCopyIsSwappedBackForATargetLostAfterTheSwap == SwapBack

(* "a move cancelled by a recovery is retried and completes" (note 1's     *)
(* recovery story, step 08: the retry under the new epoch).                *)
AMoveCancelledByARecoveryIsRetriedAndCompletes ==
    /\ RemoveLeaving
    /\ budget.retries > 0 /\ record.epoch > 1 /\ record.mv.replaces = {}

(* "a suspended follower's receipt activates a recovery" (finding 10): the *)
(* activation re-admits a follower that was suspended when it opened.      *)
ASuspendedFollowersReceiptActivatesARecovery ==
    /\ \E c \in Nodes : ActivateRecovery(c)
    /\ \E x \in record.suspended \cap record.recovery.installed :
           x \notin record'.suspended

(* "a suspended follower that crashes again restarts on its disk".         *)
ASuspendedFollowerThatCrashesAgainRestartsOnItsDisk ==
    \E n \in Nodes : Restart(n, FALSE) /\ SlotOf(n) \in record.suspended

(* "a duplicated append is recognised and not applied again": an append   *)
(* delivered to a replica that already holds its entry at its position (a *)
(* duplicate or a resend) leaves the log as it was and is acknowledged     *)
(* again.                                                                  *)
ADuplicatedAppendIsRecognisedAndNotAppliedAgain ==
    \E m \in InFlight(net) :
        LET n == m.to[1]
        IN  /\ m.kind = "Append" /\ Deliver(m)
            /\ At(nodes[n].log, m.pos) = m.entry
            /\ nodes'[n].log = nodes[n].log
            /\ BagCardinality(net') = BagCardinality(net)
            /\ budget.dups > 0

(* "the controller refuses a progress report from an older epoch": a      *)
(* report sent before an epoch change (a handoff's commit, a recovery's    *)
(* activation) reaches the controller after it and is answered with a      *)
(* refusal instead of being taken.                                         *)
TheControllerRefusesAProgressReportFromAnOlderEpoch ==
    \E m \in InFlight(net) :
        /\ m.kind = "Progress" /\ Deliver(m)
        /\ m.epoch < record.epoch

(* "an acknowledgement sent before a restart arrives after the suspension  *)
(* and is not counted": the owner heard of the suspension (its floor for   *)
(* the node is above the acknowledgement's incarnation) and takes nothing. *)
AnAcknowledgementSentBeforeARestartArrivesAfterTheSuspensionAndIsNotCounted ==
    \E m \in InFlight(net) :
        LET sv == nodes[m.to].serving
        IN  /\ m.kind = "Ack" /\ Deliver(m)
            /\ sv.active /\ m.inc < sv.floor[m.from[1]]
            /\ nodes'[m.to].serving = sv

(* "the controller re-admits a copy that crashed again after it was       *)
(* reported": with messages in flight the controller acts on the owner's   *)
(* report while the copy is down again (finding 21: it has no exact        *)
(* failure detector).                                                      *)
TheControllerReAdmitsACopyThatCrashedAgainAfterItWasReported ==
    \E n \in Nodes : Rejoin(n) /\ ~nodes[n].alive

(* "an acknowledgement marked suspended arrives after the re-admission and *)
(* mutes the copy": the copy marked it while it knew itself suspended, the *)
(* record re-admitted it since, and the owner mutes it again (finding 22:  *)
(* the mark is the copy's own knowledge, which lags the record; its next   *)
(* acknowledgement unmutes it).                                            *)
AnAcknowledgementMarkedSuspendedArrivesAfterTheReAdmissionAndMutesTheCopy ==
    \E m \in InFlight(net) :
        /\ m.kind = "Ack" /\ ~m.admitted /\ Deliver(m)
        /\ m.from \notin record.suspended
        /\ m.from \notin nodes[m.to].serving.muted
        /\ m.from \in nodes'[m.to].serving.muted

(* "a copy catches up from a checkpoint after the owner reclaimed what it *)
(* lacked": any InstallCheckpoint step.                                    *)
ACopyCatchesUpFromACheckpointAfterTheOwnerReclaimedWhatItLacked ==
    \E from, to \in Nodes : from # to /\ InstallCheckpoint(from, to)

(* "a copy takes a new checkpoint after the increments it needed were      *)
(* reclaimed again": a copy that already had a checkpoint installs another *)
(* one.                                                                    *)
ACopyTakesANewCheckpointAfterTheIncrementsItNeededWereReclaimedAgain ==
    \E from, to \in Nodes :
        from # to /\ nodes[to].base > 0 /\ InstallCheckpoint(from, to)

(* "a move back onto a removed copy starts from its retained data" (note  *)
(* 1, "After removal"): step 0 names a node that holds data but no         *)
(* instance in the record, so it left as a removed or dropped copy and     *)
(* kept its disk.                                                          *)
AMoveBackOntoARemovedCopyStartsFromItsRetainedData ==
    \E t \in Nodes : Len(nodes[t].log) > 0 /\ AddLearner(t)

(* "a retry after an owner change is answered from the producer's         *)
(* sequence": the retry reaches an owner at a newer epoch than the entry   *)
(* that holds the message (a recovery or a handoff carried it over), and   *)
(* the owner appends nothing.                                              *)
ARetryAfterAnOwnerChangeIsAnsweredFromTheProducersSequence ==
    \E n \in Nodes :
        /\ RetryPublish(n)
        /\ nodes'[n].log = nodes[n].log
        /\ \E p \in 1..Len(nodes[n].log) :
               /\ nodes[n].log[p][2] = budget.published
               /\ EpochOf(nodes[n].log[p]) < nodes[n].serving.epoch

(* "a retry appends a publish the serving owner lacks": the first attempt  *)
(* never reached this owner, or a recovery discarded it.                   *)
ARetryAppendsAPublishTheServingOwnerLacks ==
    \E n \in Nodes :
        RetryPublish(n) /\ Len(nodes'[n].log) > Len(nodes[n].log)

(* "a client follows an ASK during a handoff's cutover": the request is    *)
(* at the old owner of a committed handoff not yet activated.              *)
AClientFollowsAnASKDuringAHandoffsCutover ==
    \E k \in 1..CLIENTS : AnswerClient(k) /\ Reply(k).kind = "Ask"

(* "a client's stable route moves forward on a MOVED".                     *)
AClientsStableRouteMovesForwardOnAMOVED ==
    \E k \in 1..CLIENTS :
        /\ AnswerClient(k) /\ Reply(k).kind = "Moved"
        /\ clients'[k].route[2] > clients[k].route[2]

(* "a client's publish is acknowledged after a redirect": its request was  *)
(* sent on or told to try again on its way.                                *)
AClientsPublishIsAcknowledgedAfterARedirect ==
    \E k \in 1..CLIENTS : AckClient(k) /\ clients[k].hops > 0

(* "a client's request gives up at the hop limit".                         *)
AClientsRequestGivesUpAtTheHopLimit ==
    \E k \in 1..CLIENTS :
        AnswerClient(k) /\ clients[k].phase = "Sent" /\ clients'[k].phase = "Idle"

(* "a client's retry after an owner change is answered from the owner's    *)
(* history": the request reaches an owner at a newer epoch than the entry  *)
(* that holds its first attempt, which accepts it without appending.       *)
AClientsRetryAfterAnOwnerChangeIsAnsweredFromTheOwnersHistory ==
    \E k \in 1..CLIENTS :
        LET n == clients[k].at
        IN  /\ AnswerClient(k) /\ Reply(k).kind = "Accept"
            /\ nodes'[n].log = nodes[n].log
            /\ \E p \in 1..Len(nodes[n].log) :
                   /\ nodes[n].log[p][2] = clients[k].msg
                   /\ EpochOf(nodes[n].log[p]) < nodes[n].serving.epoch

(* "a client's publish is acknowledged after its owner changed": by an     *)
(* owner at a newer epoch than the first (its route moved on by a redirect *)
(* or a refresh).                                                          *)
AClientsPublishIsAcknowledgedAfterItsOwnerChanged ==
    \E k \in 1..CLIENTS : AckClient(k) /\ clients[k].epoch > 1

(* "a client is acknowledged by a new owner while another still routes to *)
(* the old one" (note 2: clients "will see the new state at different      *)
(* times").                                                                *)
AClientIsAcknowledgedByANewOwnerWhileAnotherStillRoutesToTheOldOne ==
    \E k \in 1..CLIENTS :
        /\ AckClient(k)
        /\ \E j \in 1..CLIENTS :
               /\ j # k
               /\ clients[j].route[2] > 0
               /\ clients[j].route[2] < clients[k].epoch

(* "a consumer's settle is confirmed": a step tells the consumer a settle *)
(* is done (an owner confirms a settle entry; under                        *)
(* settle_acked_before_confirm the Settle step itself).                    *)
AConsumersSettleIsConfirmed == settled' # settled

(* "a new owner keeps a settle confirmed under an earlier owner": a state  *)
(* predicate, the owner serving at the record's epoch holds a settle,      *)
(* written under an older epoch than it serves at, that the consumer was   *)
(* told is done. Never<Name> checks it on every state a step reaches.      *)
ANewOwnerKeepsASettleConfirmedUnderAnEarlierOwner ==
    /\ HasCurrentOwner
    /\ LET nd == nodes[OwnerNode]
       IN  \E p \in 1..Len(nd.log) :
              /\ EpochOf(nd.log[p]) < nd.serving.epoch
              /\ IsSettle(nd.log[p])
              /\ SettledMsg(nd.log[p]) \in settled

(* "a copy installs a checkpoint that folds in a settle": the delete       *)
(* travels inside the checkpoint's state.                                  *)
ACopyInstallsACheckpointThatFoldsInASettle ==
    \E from, to \in Nodes :
        /\ from # to /\ InstallCheckpoint(from, to)
        /\ \E p \in 1..nodes[from].base : IsSettle(At(nodes[from].log, p))

NeverAConsumersSettleIsConfirmed == [][~AConsumersSettleIsConfirmed]_vars
NeverANewOwnerKeepsASettleConfirmedUnderAnEarlierOwner ==
    [][~ANewOwnerKeepsASettleConfirmedUnderAnEarlierOwner']_vars
NeverACopyInstallsACheckpointThatFoldsInASettle ==
    [][~ACopyInstallsACheckpointThatFoldsInASettle]_vars
NeverAClientFollowsAnASKDuringAHandoffsCutover ==
    [][~AClientFollowsAnASKDuringAHandoffsCutover]_vars
NeverAClientsStableRouteMovesForwardOnAMOVED ==
    [][~AClientsStableRouteMovesForwardOnAMOVED]_vars
NeverAClientsPublishIsAcknowledgedAfterARedirect ==
    [][~AClientsPublishIsAcknowledgedAfterARedirect]_vars
NeverAClientsRequestGivesUpAtTheHopLimit ==
    [][~AClientsRequestGivesUpAtTheHopLimit]_vars
NeverAClientsRetryAfterAnOwnerChangeIsAnsweredFromTheOwnersHistory ==
    [][~AClientsRetryAfterAnOwnerChangeIsAnsweredFromTheOwnersHistory]_vars
NeverAClientsPublishIsAcknowledgedAfterItsOwnerChanged ==
    [][~AClientsPublishIsAcknowledgedAfterItsOwnerChanged]_vars
NeverAClientIsAcknowledgedByANewOwnerWhileAnotherStillRoutesToTheOldOne ==
    [][~AClientIsAcknowledgedByANewOwnerWhileAnotherStillRoutesToTheOldOne]_vars
NeverARetryAfterAnOwnerChangeIsAnsweredFromTheProducersSequence ==
    [][~ARetryAfterAnOwnerChangeIsAnsweredFromTheProducersSequence]_vars
NeverARetryAppendsAPublishTheServingOwnerLacks ==
    [][~ARetryAppendsAPublishTheServingOwnerLacks]_vars
NeverAMoveBackOntoARemovedCopyStartsFromItsRetainedData ==
    [][~AMoveBackOntoARemovedCopyStartsFromItsRetainedData]_vars
NeverACopyCatchesUpFromACheckpointAfterTheOwnerReclaimedWhatItLacked ==
    [][~ACopyCatchesUpFromACheckpointAfterTheOwnerReclaimedWhatItLacked]_vars
NeverACopyTakesANewCheckpointAfterTheIncrementsItNeededWereReclaimedAgain ==
    [][~ACopyTakesANewCheckpointAfterTheIncrementsItNeededWereReclaimedAgain]_vars
NeverTheControllerRefusesAProgressReportFromAnOlderEpoch ==
    [][~TheControllerRefusesAProgressReportFromAnOlderEpoch]_vars
NeverAMoveCompletesPastAConfirmedBoundary ==
    [][~AMoveCompletesPastAConfirmedBoundary]_vars
NeverAConfirmIsCountedFromTheNewSetAfterASwap ==
    [][~AConfirmIsCountedFromTheNewSetAfterASwap]_vars
NeverARecoveryCancelsAMoveInProgress == [][~ARecoveryCancelsAMoveInProgress]_vars
NeverARecoveryActivates == [][~ARecoveryActivates]_vars
NeverAHandoffCommitsAndTheNewOwnerConfirms ==
    [][~AHandoffCommitsAndTheNewOwnerConfirms]_vars
NeverAHandoffIsCancelledAndAdmissionReopens ==
    [][~AHandoffIsCancelledAndAdmissionReopens]_vars
NeverARestartedFollowerRejoinsWithoutAFence ==
    [][~ARestartedFollowerRejoinsWithoutAFence]_vars
NeverAZombieOwnerIsRefused == [][~AZombieOwnerIsRefused]_vars
NeverRFIncreasesAndAConfirmUsesTheNewW ==
    [][~RFIncreasesAndAConfirmUsesTheNewW]_vars
NeverAPublishIsConfirmedWhileALearnerCatchesUpAndOneFollowerIsDown ==
    [][~APublishIsConfirmedWhileALearnerCatchesUpAndOneFollowerIsDown]_vars
NeverALostFollowerIsSwappedOutForANewCopy ==
    [][~ALostFollowerIsSwappedOutForANewCopy]_vars
NeverADrainedNodeLeavesThePartition == [][~ADrainedNodeLeavesThePartition]_vars
NeverTheLeavingCopyIsSwappedBackForATargetLostAfterTheSwap ==
    [][~TheLeavingCopyIsSwappedBackForATargetLostAfterTheSwap]_vars
NeverAMoveCancelledByARecoveryIsRetriedAndCompletes ==
    [][~AMoveCancelledByARecoveryIsRetriedAndCompletes]_vars
NeverASuspendedFollowersReceiptActivatesARecovery ==
    [][~ASuspendedFollowersReceiptActivatesARecovery]_vars
NeverASuspendedFollowerThatCrashesAgainRestartsOnItsDisk ==
    [][~ASuspendedFollowerThatCrashesAgainRestartsOnItsDisk]_vars
NeverADuplicatedAppendIsRecognisedAndNotAppliedAgain ==
    [][~ADuplicatedAppendIsRecognisedAndNotAppliedAgain]_vars
NeverAnAcknowledgementSentBeforeARestartArrivesAfterTheSuspensionAndIsNotCounted ==
    [][~AnAcknowledgementSentBeforeARestartArrivesAfterTheSuspensionAndIsNotCounted]_vars
NeverTheControllerReAdmitsACopyThatCrashedAgainAfterItWasReported ==
    [][~TheControllerReAdmitsACopyThatCrashedAgainAfterItWasReported]_vars
NeverAnAcknowledgementMarkedSuspendedArrivesAfterTheReAdmissionAndMutesTheCopy ==
    [][~AnAcknowledgementMarkedSuspendedArrivesAfterTheReAdmissionAndMutesTheCopy]_vars

=============================================================================
