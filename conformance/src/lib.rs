//! Conformance harness: drives the implementation from model traces.
