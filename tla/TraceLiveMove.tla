------------------------------ MODULE TraceLiveMove ------------------------------
(***************************************************************************)
(* Trace validation: a run of the runtime (its NDJSON events, see          *)
(* ../docs/traces.md) is a behaviour of LiveMove.tla with messages in      *)
(* flight. `livemove trace validate` turns one trace file into the module  *)
(* TraceData (the sequence Trace of events, nodes as numbers, messages as  *)
(* Network.tla's records, entries as <<epoch, msg>>) and runs TLC on this  *)
(* module.                                                                 *)
(*                                                                         *)
(* Each step of TraceNext takes the event at position l and the one spec   *)
(* action that event names, with the event's fields pinned on the step     *)
(* (the position shipped, the tail confirmed, the incarnation restarted).  *)
(* The only steps allowed between events are the owner's progress reports *)
(* to the controller and their delivery: the runtime's controller reads    *)
(* the owner's progress by a call that writes no event, and in these runs  *)
(* the only guard that reads the controller's knowledge is Rejoin's, so    *)
(* the internal steps are allowed only right before a Rejoin event.        *)
(*                                                                         *)
(* The spec's budgets are lifted to the trace: as many publishes, crashes, *)
(* suspicions (recoveries opened), restarts, drops and duplicates as the   *)
(* trace has, and a window no run of that length can fill. The           *)
(* instance's ASSUME (MESSAGES in 0..4, the                               *)
(* bound of the Rust model's packed states) is not evaluated by TLC for an *)
(* instantiated module, and no other bound of LiveMove.tla limits log      *)
(* length outside the duplicate_append_applies_twice mutant, which a trace *)
(* is never validated under.                                               *)
(*                                                                         *)
(* The verdict is printed, not raised: the invariant TraceReport prints    *)
(* "trace-explained" in a state past the last event, and "trace-at" with   *)
(* the position and the failing guards of the next event's action in every *)
(* other state. TLC keeps every state consistent with the events so far    *)
(* (breadth first); when no state got past the end, the first unexplained *)
(* event is the largest position printed, and its guards say why. (An      *)
(* ENABLED test of the next step would print only the stuck states, but   *)
(* TLC evaluated it some 40 times slower than the step itself.)         *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets, TLC, TraceData

VARIABLES nodes, record, budget, net, known, clients, confirmed, forked, settled,
          l  \* the position in Trace of the next event to explain

(* TraceData also counts the trace's publishes, retries, crashes,        *)
(* recoveries opened, restarts, drops and duplicates (TracePublishes,     *)
(* TraceRetries, ..., TraceDups): the spec's budgets.                     *)
(* No link holds more messages than the trace sends.                       *)
TraceWindow == Len(Trace) + 1

LM == INSTANCE LiveMove WITH
        N <- TraceNodes, RF <- TraceRF, MESSAGES <- TracePublishes,
        CRASHES <- TraceCrashes, SUSPICIONS <- TraceSuspicions, RESTARTS <- TraceRestarts,
        DISK_LOSSES <- TraceDiskLosses, MOVES <- TraceMoves, RF_INCREASES <- 0, HANDOFFS <- TraceHandoffs,
        CANCELS <- 0, TRUNCATIONS <- 0, PUBLISH_RETRIES <- TraceRetries, CLIENT_HOPS <- 0,
        CLIENTS <- 1,
        SETTLES <- TraceSettles,
        MUTANT <- "none", NET <- TRUE,
        WINDOW <- TraceWindow,
        DROPS <- TraceDrops, DUPS <- TraceDups

-----------------------------------------------------------------------------
(* One event, one spec step.                                               *)

PublishStep(e) ==
    /\ LM!Publish(e.node)
    /\ Len(nodes'[e.node].log) = e.pos
    /\ nodes'[e.node].log[e.pos] = <<e.epoch, e.key>>

(* A producer's retry of message e.key, its first attempt's answer lost:  *)
(* the spec's RetryPublish, whose producer retries its newest message. A   *)
(* held answer names the entry the owner's log holds (the step changes no *)
(* copy: only the retry budget); an appended one the entry appended at the *)
(* owner's epoch. A retry whose message no earlier event named (its first *)
(* attempt reached no owner, so the spec never published it) is the       *)
(* spec's Publish of the next message, and cannot be held.                *)
RetryPublishStep(e) ==
    IF e.key > budget.published
    THEN ~e.held /\ PublishStep(e)
    ELSE /\ LM!RetryPublish(e.node)
         /\ e.key = budget.published
         /\ e.pos \in 1..Len(nodes'[e.node].log)
         /\ nodes'[e.node].log[e.pos] = <<e.epoch, e.key>>
         /\ Len(nodes'[e.node].log) = Len(nodes[e.node].log) + (IF e.held THEN 0 ELSE 1)
         /\ ~e.held => Len(nodes'[e.node].log) = e.pos

(* The consumer's settle: the owner appends the Delete of the oldest       *)
(* message it delivers (the event's key, read as that message's id) at     *)
(* the event's position and epoch.                                         *)
SettleStep(e) ==
    /\ LM!Settle(e.node)
    /\ Len(nodes'[e.node].log) = e.pos
    /\ nodes'[e.node].log[e.pos] = LM!SettleEntry(e.epoch, e.key)

(* The append Replicate sends ships the position after the copy's last     *)
(* acknowledgement: the logged position must be that one.                  *)
ReplicatePos(e) == LM!AckOf(nodes[e.from].serving.acks, LM!SlotOf(e.to)) + 1

(* A message to a lost instance that the spec never sent: an owner that  *)
(* has not yet read that the disk was lost still ships to it (the event's *)
(* to_disk, written only when not 0), and the message is lost on arrival  *)
(* (the spec's owner ships to current instances only: an append to a lost *)
(* disk changes nothing). Such an append, its delivery, loss or copy is   *)
(* no step of the spec. Only appends: a message from a lost instance is   *)
(* one it sent while its disk existed, and must be in flight.            *)
ToSlot(e) == <<e.to, IF "to_disk" \in DOMAIN e THEN e.to_disk ELSE 0>>
Ghost(m) == m.kind = "Append" /\ ~LM!Current(m.to) /\ m \notin LM!InFlight(net)
Unchanged == UNCHANGED <<nodes, record, budget, net, known, clients, confirmed, forked, settled>>

ReplicateStep(e) ==
    IF ~LM!Current(ToSlot(e))
    THEN Unchanged
    ELSE LM!Replicate(e.from, e.to) /\ ReplicatePos(e) = e.pos

(* An append's delivery logs the copy's log length before it is handled.  *)
(* (An IF: inside an action TLC evaluates every disjunct.)                 *)
LenOk(e) == IF "len" \in DOMAIN e THEN Len(nodes[LM!Dest(e.msg)].log) = e.len ELSE TRUE
DeliverStep(e) == IF Ghost(e.msg) THEN Unchanged ELSE LM!Deliver(e.msg) /\ LenOk(e)

ConfirmStep(e) ==
    LM!Confirm(e.node) /\ nodes'[e.node].serving.confirmed = e.tail

(* The owner's reading of the record names the copies it unmuted; the     *)
(* spec's owner unmutes every muted copy the record re-admitted, so an     *)
(* owner that reads and ignores (or unmutes too few) is rejected here.     *)
NoticeReadmissionStep(e) ==
    /\ nodes[e.node].serving.muted \ record.suspended = e.copies
    /\ LM!NoticeReadmission(e.node)

(* A restart on an empty disk (the event's fresh_disk, written only when  *)
(* true) is the spec's Restart with a fresh disk: a new instance.          *)
Fresh(e) == IF "fresh_disk" \in DOMAIN e THEN e.fresh_disk ELSE FALSE
RestartStep(e) ==
    /\ LM!Restart(e.node, Fresh(e))
    /\ nodes'[e.node].inc = e.inc
    (* The instance it came back as: a new one on a fresh disk. *)
    /\ (<<e.node, nodes'[e.node].gen>> \in record'.suspended) = e.suspended

(* A handoff: the owner's node makes the first three writes, the new      *)
(* owner's node the activation; F and the new epoch are pinned.            *)
CloseAdmissionStep(e) == LM!CloseAdmission(e.to) /\ LM!OwnerNode = e.node
ReportFinalBoundaryStep(e) ==
    /\ LM!ReportFinalBoundary
    /\ LM!OwnerNode = e.node
    /\ record'.handoff.fin = e.boundary
CommitHandoffStep(e) == LM!CommitHandoff /\ record.handoff.from = e.node
ActivateOwnerStep(e) ==
    /\ LM!ActivateOwner
    /\ record.handoff.to = e.node
    /\ record.epoch = e.epoch

(* A planned move: the learner's node writes step 0, the owner's node the  *)
(* rest; B is pinned.                                                      *)
OwnerSwitchStep(e) ==
    /\ LM!OwnerSwitch
    /\ LM!OwnerNode = e.node
    /\ record'.mv.boundary = e.boundary
(* The leaving copy is named by its node: a lost instance leaves from a   *)
(* node that is back on a new disk.                                        *)
RemoveLeavingStep(e) ==
    /\ LM!RemoveLeaving
    /\ {x[1] : x \in record.leaving} = {e.node}

(* The controller's way out of a swapped move whose target is down or     *)
(* lost: the leaving copy (on node back) counts again, the target leaves.  *)
SwapBackStep(e) ==
    /\ LM!SwapBack
    /\ record.mv.target[1] = e.target
    /\ {x[1] : x \in record.leaving} = {e.back}

(* A recovery: the controller's failure detector (or the restarted owner *)
(* itself) opens it against the owner named; each eligible copy seals,   *)
(* the sealed copies install the recovered tail (its length pinned), and *)
(* a copy that installed activates at the pinned epoch.                  *)
(* The detector cannot tell a dead owner from one it lost touch with: an *)
(* opening is either (the spec's zombie flag), one suspicion of the trace's *)
(* budget per opening.                                                    *)
OpenRecoveryStep(e) ==
    /\ \E zombie \in BOOLEAN : LM!OpenRecovery(zombie)
    /\ LM!OwnerNode = e.node
InstallRecoveredStep(e) ==
    /\ LM!InstallRecovered(e.node)
    /\ Len(record'.recovery.tail) = e.tail
ActivateRecoveryStep(e) ==
    /\ LM!ActivateRecovery(e.node)
    /\ record'.epoch = e.epoch

Step(e) ==
    CASE e.action = "Publish" -> PublishStep(e)
      [] e.action = "RetryPublish" -> RetryPublishStep(e)
      [] e.action = "Settle" -> SettleStep(e)
      [] e.action = "Replicate" -> ReplicateStep(e)
      [] e.action = "Deliver" -> DeliverStep(e)
      [] e.action = "Drop" -> IF Ghost(e.msg) THEN Unchanged ELSE LM!Drop(e.msg)
      [] e.action = "Duplicate" -> IF Ghost(e.msg) THEN Unchanged ELSE LM!Duplicate(e.msg)
      [] e.action = "Confirm" -> ConfirmStep(e)
      [] e.action = "Crash" -> LM!Crash(e.node)
      [] e.action = "Restart" -> RestartStep(e)
      [] e.action = "Rejoin" -> LM!Rejoin(e.node)
      [] e.action = "NoticeRejoin" -> LM!NoticeRejoin(e.node)
      [] e.action = "NoticeReadmission" -> NoticeReadmissionStep(e)
      [] e.action = "CloseAdmission" -> CloseAdmissionStep(e)
      [] e.action = "ReportFinalBoundary" -> ReportFinalBoundaryStep(e)
      [] e.action = "CommitHandoff" -> CommitHandoffStep(e)
      [] e.action = "ActivateOwner" -> ActivateOwnerStep(e)
      [] e.action = "AddLearner" -> LM!AddLearner(e.node)
      [] e.action = "AdmitLearner" -> LM!AdmitLearner(e.node)
      [] e.action = "Swap" -> LM!Swap(e.target, e.leaving)
      [] e.action = "OwnerSwitch" -> OwnerSwitchStep(e)
      [] e.action = "RemoveLeaving" -> RemoveLeavingStep(e)
      [] e.action = "SwapBack" -> SwapBackStep(e)
      [] e.action = "OpenRecovery" -> OpenRecoveryStep(e)
      [] e.action = "Seal" -> LM!Seal(e.node)
      [] e.action = "InstallRecovered" -> InstallRecoveredStep(e)
      [] e.action = "ActivateRecovery" -> ActivateRecoveryStep(e)
      [] OTHER -> FALSE

Explain == l <= Len(Trace) /\ Step(Trace[l]) /\ l' = l + 1

(* Progress reports and their delivery, only before the events whose      *)
(* guards read what the controller knows: Rejoin, a handoff's commit, and  *)
(* a move's admission, swap, removal and swap back.                       *)
(* The runtime's controller reads the owner's progress by a call, with no  *)
(* report message, so no report window: the spec's ReportProgress also    *)
(* waits while any refusal to the reporter is in flight (its bound on its *)
(* own report messages, finding 23), and a refusal a copy sent the owner  *)
(* for an old epoch's append kept the spec's controller from learning     *)
(* what the runtime's owner had read (finding 29). ReadProgress is        *)
(* ReportProgress without that wait, and only of the record's owner at    *)
(* the record's epoch, the one node whose progress the runtime's writes   *)
(* read: a stale owner's reports are the ones the controller refuses, and *)
(* without the window they would pile up refusals (finding 23).           *)
ReadProgress(from, of) ==
    /\ LM!Serves(from)
    /\ LM!OwnerNode = from
    /\ nodes[from].serving.epoch = record.epoch
    /\ ~\E m \in LM!InFlight(net) : m.kind = "Progress" /\ m.from[1] = from
    /\ LET sv == nodes[from].serving
           news(x) ==
               /\ LM!AckOf(sv.acks, x) >= sv.confirmed
               /\ \/ known.epoch # sv.epoch
                  \/ known.confirmed # sv.confirmed
                  \/ LM!AckOf(known.acks, x) # LM!AckOf(sv.acks, x)
           cands == {x \in LM!Awaited : x[1] = of /\ news(x)}
       IN  /\ cands # {}
           /\ LET x == LM!MinSlot(cands)
              IN  net' = LM!Send(net, LM!ProgressMsg(LM!SlotOf(from), sv.epoch, x,
                                                    LM!AckOf(sv.acks, x), sv.confirmed))
    /\ UNCHANGED <<nodes, record, budget, known, confirmed, forked, settled, clients>>

Internal ==
    /\ l <= Len(Trace)
    /\ Trace[l].action \in {"Rejoin", "CommitHandoff", "AdmitLearner", "Swap",
                             "RemoveLeaving", "SwapBack"}
    /\ \/ \E from, of \in LM!Nodes : from # of /\ ReadProgress(from, of)
       \/ \E m \in LM!InFlight(net) : m.kind = "Progress" /\ LM!Deliver(m)
    /\ UNCHANGED l

(* The trace's settle entries were written with TraceData's bit, which  *)
(* must be the spec's (LiveMove.tla, SettleBit).                          *)
TraceInit ==
    /\ Assert(TraceSettleBit = LM!SettleBit,
              <<"TraceData's settle bit is not the spec's", TraceSettleBit, LM!SettleBit>>)
    /\ LM!Init
    /\ l = 1
TraceNext == Explain \/ Internal

-----------------------------------------------------------------------------
(* Why the event's action is disabled: the guards that fail, as text.      *)

S(x) == ToString(x)
Fail(ok, text) == IF ok THEN {} ELSE {text}

(* An acknowledgement's mark is the copy's own knowledge of its           *)
(* suspension (NoticeRejoin clears it): when the same acknowledgement with *)
(* the other mark is in flight, that is said too.                          *)
InFlightText(m) ==
    IF m \in LM!InFlight(net) THEN {}
    ELSE {"the message is not in flight (" \o S(Cardinality(LM!InFlight(net)))
          \o " distinct messages are)"}
         \cup (IF m.kind = "Ack"
                  /\ [m EXCEPT !.admitted = ~m.admitted] \in LM!InFlight(net)
               THEN {"the same acknowledgement marked admitted = "
                     \o S(~m.admitted) \o " is in flight"}
               ELSE {})

WhyPublish(e) ==
    LET n == e.node IN
    Fail(LM!Serves(n), "n" \o S(n) \o " does not serve")
    \cup Fail(nodes[n].serving.open, "n" \o S(n) \o " has admission closed")
    \cup Fail(Len(nodes[n].log) + 1 = e.pos,
              "the next position is " \o S(Len(nodes[n].log) + 1))
    \cup Fail(budget.published + 1 = e.key,
              "the next message id is " \o S(budget.published + 1))
    \cup Fail(nodes[n].serving.epoch = e.epoch,
              "n" \o S(n) \o " serves at epoch " \o S(nodes[n].serving.epoch))

WhyRetryPublish(e) ==
    LET n == e.node
        log == nodes[n].log
        held == {p \in 1..Len(log) : log[p][2] = e.key}
    IN
    IF e.key > budget.published
    THEN Fail(~e.held, "message " \o S(e.key) \o " was never published: no log holds it")
         \cup WhyPublish(e)
    ELSE
    Fail(LM!Serves(n), "n" \o S(n) \o " does not serve")
    \cup Fail(nodes[n].serving.open, "n" \o S(n) \o " has admission closed")
    \cup Fail(e.key = budget.published,
              "the spec's producer retries its newest message only, "
              \o S(budget.published))
    \cup Fail(~e.held \/ held # {},
              "n" \o S(n) \o "'s log does not hold message " \o S(e.key))
    \cup Fail(e.held \/ held = {},
              "n" \o S(n) \o "'s log holds message " \o S(e.key) \o " at "
              \o S(held) \o ": a retry of it appends nothing")
    \cup Fail(~e.held \/ (e.pos \in held /\ log[e.pos][1] = e.epoch),
              "n" \o S(n) \o " holds message " \o S(e.key) \o " at "
              \o S({<<p, log[p][1]>> : p \in held}) \o " (position, epoch)")
    \cup Fail(e.held \/ Len(log) + 1 = e.pos,
              "the next position is " \o S(Len(log) + 1))
    \cup Fail(e.held \/ nodes[n].serving.epoch = e.epoch,
              "n" \o S(n) \o " serves at epoch " \o S(nodes[n].serving.epoch))

WhySettle(e) ==
    LET n == e.node
        delivered == IF LM!Serves(n) THEN LM!DeliveredAt(n) ELSE {}
    IN
    Fail(LM!Serves(n), "n" \o S(n) \o " does not serve")
    \cup Fail(nodes[n].serving.open, "n" \o S(n) \o " has admission closed")
    \cup Fail(delivered # {}, "n" \o S(n) \o " delivers no message")
    \cup Fail(Len(nodes[n].log) + 1 = e.pos,
              "the next position is " \o S(Len(nodes[n].log) + 1))
    \cup Fail(nodes[n].serving.epoch = e.epoch,
              "n" \o S(n) \o " serves at epoch " \o S(nodes[n].serving.epoch))
    \cup (IF delivered = {} THEN {}
          ELSE LET p == CHOOSE q \in delivered : \A r \in delivered : q <= r IN
               Fail(nodes[n].log[p][2] = e.key,
                    "the oldest message n" \o S(n) \o " delivers is "
                    \o S(nodes[n].log[p][2]) \o ", at position " \o S(p)))

WhyReplicate(e) ==
    LET f == nodes[e.from] IN
    Fail(LM!Serves(e.from), "n" \o S(e.from) \o " does not serve")
    \cup Fail(ReplicatePos(e) = e.pos,
              "the spec ships position " \o S(ReplicatePos(e))
              \o " (after the copy's last acknowledgement)")
    \cup Fail(ReplicatePos(e) <= Len(f.log),
              "the owner's log ends at " \o S(Len(f.log)))
    \cup Fail(LM!SlotOf(e.to) \in f.serving.counted \cup record.followers
                  \cup record.learners \cup record.leaving,
              "n" \o S(e.to) \o " holds no copy the owner replicates to")

WhyConfirm(e) ==
    Fail(LM!Serves(e.node), "n" \o S(e.node) \o " does not serve")
    \cup Fail(LM!Confirmable(e.node) = e.tail,
              "the acknowledgements confirm through "
              \o S(LM!Confirmable(e.node)) \o ", confirmed before: "
              \o S(nodes[e.node].serving.confirmed))

WhyDeliver(e) ==
    InFlightText(e.msg)
    \cup Fail(LenOk(e), "the copy's log holds "
                        \o S(Len(nodes[LM!Dest(e.msg)].log)) \o " entries")
    \cup (IF e.msg.kind = "Progress" THEN {}
          ELSE Fail(nodes[LM!Dest(e.msg)].alive, "the destination is down"))

WhyRestart(e) ==
    Fail(~nodes[e.node].alive, "n" \o S(e.node) \o " is up")
    \cup Fail(nodes[e.node].inc + 1 = e.inc,
              "the next incarnation is " \o S(nodes[e.node].inc + 1))
    \cup Fail(~e.suspended \/ LM!SlotOf(e.node) \in record.followers,
              "n" \o S(e.node) \o " is no follower to suspend")
    \cup Fail(~e.suspended \/ Cardinality(LM!CurrentOf(record.suspended) \ {LM!SlotOf(e.node)}) + 1
                                < LM!WServed,
              "as many followers are suspended as W allows")
    \cup Fail(~Fresh(e) \/ nodes[e.node].gen = 0,
              "n" \o S(e.node) \o " lost a disk before (the spec has two disk generations)")

WhyRejoin(e) ==
    Fail(LM!SlotOf(e.node) \in record.suspended, "n" \o S(e.node) \o " is not suspended")
    \cup Fail(~record.recovery.pending, "a recovery is pending")
    \cup Fail(LM!SeesCaughtUp(LM!SlotOf(e.node)),
              "the controller knows n" \o S(e.node) \o " through "
              \o S(LM!KnownPos(LM!SlotOf(e.node))) \o ", the owner's tail "
              \o S(known.confirmed) \o " (reports and deliveries tried)")

WhyNoticeRejoin(e) ==
    LET n == e.node IN
    Fail(nodes[n].alive, "n" \o S(n) \o " is down")
    \cup Fail(nodes[n].suspended, "n" \o S(n) \o " does not know itself suspended")
    \cup Fail(LM!SlotOf(n) \notin record.suspended,
              "the record still suspends n" \o S(n))

(* The owner reads re-admissions from the record (finding 35). Its guard   *)
(* that messages are in flight always holds here (NET <- TRUE), and so     *)
(* does RESTARTS > 0 wherever a copy is muted.                             *)
WhyNoticeReadmission(e) ==
    LET n == e.node IN
    Fail(LM!OwnerNode = n, "the record's owner is n" \o S(LM!OwnerNode))
    \cup Fail(LM!OwnerOk,
              "the record's owner does not serve at the record's epoch "
              \o S(record.epoch))
    \cup Fail(nodes[n].serving.muted \ record.suspended # {},
              "n" \o S(n) \o " mutes no copy the record no longer suspends (muted: "
              \o S(nodes[n].serving.muted) \o ", suspended: "
              \o S(record.suspended) \o ")")
    \cup Fail(nodes[n].serving.muted \ record.suspended = e.copies,
              "the copies n" \o S(n) \o " muted that the record re-admitted are "
              \o S(nodes[n].serving.muted \ record.suspended)
              \o "; the event unmuted " \o S(e.copies))

WhyCloseAdmission(e) ==
    Fail(LM!OwnerNode = e.node, "the record's owner is n" \o S(LM!OwnerNode))
    \cup Fail(record.handoff.phase = "None", "a handoff is pending")
    \cup Fail(LM!OwnerOk, "the record's owner does not serve at the record's epoch")
    \cup Fail(nodes[e.node].serving.open, "n" \o S(e.node) \o " has admission closed")
    \cup Fail(LM!SlotOf(e.to) \in record.followers \ record.suspended,
              "n" \o S(e.to) \o " is no admitted follower")

WhyReportFinalBoundary(e) ==
    Fail(record.handoff.phase = "Closed",
         "the handoff is " \o record.handoff.phase \o ", not Closed")
    \cup Fail(nodes[e.node].serving.confirmed = Len(nodes[e.node].log),
              "n" \o S(e.node) \o " confirmed through "
              \o S(nodes[e.node].serving.confirmed) \o " of "
              \o S(Len(nodes[e.node].log)) \o " accepted")
    \cup Fail(Len(nodes[e.node].log) = e.boundary,
              "the owner's log ends at " \o S(Len(nodes[e.node].log)))

WhyCommitHandoff(e) ==
    Fail(record.handoff.phase = "Reported",
         "the handoff is " \o record.handoff.phase \o ", not Reported")
    \cup Fail(LM!SeesCovering(LM!SlotOf(record.handoff.to), record.handoff.fin),
              "the controller knows the new owner through "
              \o S(LM!KnownPos(LM!SlotOf(record.handoff.to))) \o ", F is "
              \o S(record.handoff.fin) \o " (reports and deliveries tried)")

WhyActivateOwner(e) ==
    Fail(record.handoff.phase = "Committed",
         "the handoff is " \o record.handoff.phase \o ", not Committed")
    \cup Fail(record.handoff.to = e.node,
              "the handoff's new owner is n" \o S(record.handoff.to))
    \cup Fail(record.epoch = e.epoch, "the record's epoch is " \o S(record.epoch))

WhyOpenRecovery(e) ==
    Fail(~record.recovery.pending, "a recovery is pending")
    \cup Fail(LM!OwnerNode = e.node, "the record's owner is n" \o S(LM!OwnerNode))

WhySeal(e) ==
    LET slot == LM!SlotOf(e.node) IN
    Fail(record.recovery.pending, "no recovery is pending")
    \cup Fail(nodes[e.node].alive, "n" \o S(e.node) \o " is down")
    \cup Fail(slot \in record.eligible, "n" \o S(e.node) \o " is not eligible")
    \cup Fail(slot \notin record.recovery.sealed, "n" \o S(e.node) \o " sealed already")

WhyInstallRecovered(e) ==
    Fail(record.recovery.pending, "no recovery is pending")
    \cup Fail(Cardinality(LM!Seals) >= LM!SealThreshold,
              S(Cardinality(LM!Seals)) \o " seals of " \o S(LM!SealThreshold))
    \cup Fail(LM!SlotOf(e.node) \in LM!Seals, "n" \o S(e.node) \o " did not seal")
    \cup Fail(Len(record.recovery.tail) = e.tail,
              "the recovered tail so far has " \o S(Len(record.recovery.tail))
              \o " entries")

WhyActivateRecovery(e) ==
    Fail(record.recovery.pending /\ record.recovery.chosen,
         "no recovery with a chosen tail is pending")
    \cup Fail(LM!SlotOf(e.node) \in record.recovery.installed,
              "n" \o S(e.node) \o " did not install the recovered tail")
    \cup Fail(record.epoch + 1 = e.epoch, "the next epoch is " \o S(record.epoch + 1))
    \cup {"installed: " \o S(record.recovery.installed) \o ", suspended: "
          \o S(record.suspended)}

Why(e) ==
    CASE e.action = "Publish" -> WhyPublish(e)
      [] e.action = "RetryPublish" -> WhyRetryPublish(e)
      [] e.action = "Settle" -> WhySettle(e)
      [] e.action = "Replicate" -> WhyReplicate(e)
      [] e.action = "Deliver" -> WhyDeliver(e)
      [] e.action \in {"Drop", "Duplicate"} -> InFlightText(e.msg)
      [] e.action = "Confirm" -> WhyConfirm(e)
      [] e.action = "Crash" -> Fail(nodes[e.node].alive, "n" \o S(e.node) \o " is down")
      [] e.action = "Restart" -> WhyRestart(e)
      [] e.action = "Rejoin" -> WhyRejoin(e)
      [] e.action = "NoticeRejoin" -> WhyNoticeRejoin(e)
      [] e.action = "NoticeReadmission" -> WhyNoticeReadmission(e)
      [] e.action = "CloseAdmission" -> WhyCloseAdmission(e)
      [] e.action = "ReportFinalBoundary" -> WhyReportFinalBoundary(e)
      [] e.action = "CommitHandoff" -> WhyCommitHandoff(e)
      [] e.action = "ActivateOwner" -> WhyActivateOwner(e)
      [] e.action \in {"AddLearner", "AdmitLearner", "Swap", "OwnerSwitch",
                       "RemoveLeaving", "SwapBack"}
            -> {"the move is in phase " \o record.mv.phase
                \o "; the controller knows the target through "
                \o S(LM!KnownPos(record.mv.target)) \o ", the owner's tail "
                \o S(known.confirmed)}
      [] e.action = "OpenRecovery" -> WhyOpenRecovery(e)
      [] e.action = "Seal" -> WhySeal(e)
      [] e.action = "InstallRecovered" -> WhyInstallRecovered(e)
      [] e.action = "ActivateRecovery" -> WhyActivateRecovery(e)
      [] OTHER -> {"no action of the spec is named " \o e.action}

TraceReport ==
    IF l > Len(Trace) THEN PrintT(<<"trace-explained", Len(Trace)>>)
    ELSE PrintT(<<"trace-at", l, Why(Trace[l])>>)

(* TLC checks every state reached; a state constraint keeps it from        *)
(* looking past the end.                                                   *)
InTrace == l <= Len(Trace) + 1
=============================================================================
