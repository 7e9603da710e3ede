//! Stateright model of live replica moves.
