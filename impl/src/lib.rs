//! Production-style implementation of live replica moves (see `docs/`).
