------------------------------ MODULE Network ------------------------------
(***************************************************************************)
(* The network between the owner, its replicas and the controller, kept   *)
(* protocol: what it guarantees is a constant of the configuration, and    *)
(* LiveMove.tla only sends, receives and loses messages through the        *)
(* operators below.                                                        *)
(*                                                                         *)
(*  - NET = FALSE: no network. Every replication step is atomic: the       *)
(*    receiver applies an entry and the sender learns of it in one step,   *)
(*    and a restart tells the owner of the suspension at once.             *)
(*  - NET = TRUE: messages in flight. The network is a bag (multiset) of   *)
(*    message records; a message is delivered once per copy, in any       *)
(*    order, to a process that is up (one to a process that is down waits *)
(*    for it); the network may lose DROPS and duplicate DUPS of them in    *)
(*    all; a sender keeps at most WINDOW messages outstanding on one link. *)
(*                                                                         *)
(* The message records are the wire vocabulary of model/src/net.rs (and    *)
(* impl/), with a `kind` field:                                            *)
(*   Append  [from: node, to: instance, epoch, pos, prev: entry, entry]    *)
(*   Ack     [to: node, epoch, from: instance, inc, pos, entry, admitted]  *)
(*   Refuse  [to: node, epoch]                                             *)
(*   Suspend [to: node, from: instance, inc]                               *)
(*   Progress [from: instance, epoch, of: instance, pos, confirmed]        *)
(* A node is 1..N, an instance <<node, gen>>, an entry <<epoch, msg>>. A   *)
(* progress report goes from the owner to the controller, which is no node *)
(* (Controller = 0) and is always up.                                      *)
(***************************************************************************)
EXTENDS Naturals, Bags

CONSTANTS
    NET,     \* messages in flight (TRUE) or atomic replication (FALSE)
    WINDOW,  \* messages outstanding on one link before its sender sends again
    DROPS,   \* messages the network may lose
    DUPS     \* messages the network may deliver twice

ASSUME /\ NET \in BOOLEAN
       /\ NET => WINDOW >= 1
       /\ ~NET => WINDOW + DROPS + DUPS = 0

AppendMsg(from, to, epoch, pos, prev, entry) ==
    [kind |-> "Append", from |-> from, to |-> to, epoch |-> epoch, pos |-> pos,
     prev |-> prev, entry |-> entry]
AckMsg(to, epoch, from, inc, pos, entry, admitted) ==
    [kind |-> "Ack", to |-> to, epoch |-> epoch, from |-> from, inc |-> inc,
     pos |-> pos, entry |-> entry, admitted |-> admitted]
RefuseMsg(to, epoch) == [kind |-> "Refuse", to |-> to, epoch |-> epoch]
SuspendMsg(to, from, inc) ==
    [kind |-> "Suspend", to |-> to, from |-> from, inc |-> inc]
ProgressMsg(from, epoch, of, pos, confirmed) ==
    [kind |-> "Progress", from |-> from, epoch |-> epoch, of |-> of,
     pos |-> pos, confirmed |-> confirmed]

(* The controller as a message endpoint: no node is 0.                     *)
Controller == 0

NoMessages == EmptyBag

(* The distinct messages in flight in bag b.                               *)
InFlight(b) == DOMAIN b

(* Bag b with one more copy of m, and with one copy of m less.             *)
Send(b, m) == b (+) SetToBag({m})
Discard(b, m) == b (-) SetToBag({m})

(* The node a message is addressed to (an Append names an instance; a      *)
(* progress report goes to the controller).                                *)
Dest(m) == CASE m.kind = "Append" -> m.to[1]
             [] m.kind = "Progress" -> Controller
             [] OTHER -> m.to

(* Whether m travels between nodes a and b, either way. A refusal answers  *)
(* an append from its destination: it is on the link that append came      *)
(* over, whichever replica sent it, so it counts for every link touching   *)
(* its destination. A progress report is on no link between two nodes.    *)
OnLink(m, a, b) ==
    IF m.kind = "Refuse" THEN Dest(m) \in {a, b}
    ELSE LET src == IF m.kind = "Append" THEN m.from ELSE m.from[1]
         IN  {src, Dest(m)} = {a, b}

(* Copies in bag b of the messages in set S.                               *)
RECURSIVE CopiesOf(_, _)
CopiesOf(b, S) ==
    IF S = {} THEN 0
    ELSE LET m == CHOOSE x \in S : TRUE
         IN  b[m] + CopiesOf(b, S \ {m})

(* Messages in flight on the link between a and b: what its window counts. *)
LinkLoad(b, a, c) == CopiesOf(b, {m \in InFlight(b) : OnLink(m, a, c)})

=============================================================================
