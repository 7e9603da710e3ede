//! Helpers shared by the runtime's integration tests.

#![allow(dead_code)]

pub mod etcd;
pub mod proxy;
pub mod sim;
