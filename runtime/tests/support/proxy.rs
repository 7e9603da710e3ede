//! A TCP forwarder on a 127.0.0.1 port of its own to one upstream address,
//! that a test can cut (every connection through it reset, new ones
//! closed at once) and restore, while the upstream stays up: a broken
//! network path to a server, not a dead server.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

/// A running forwarder; its threads end when it is dropped and its
/// connections close.
pub struct Proxy {
    addr: SocketAddr,
    shared: Arc<Shared>,
}

struct Shared {
    upstream: SocketAddr,
    cut: AtomicBool,
    stop: AtomicBool,
    /// Both ends of every connection forwarded, to shut them at a cut.
    open: Mutex<Vec<TcpStream>>,
}

impl Proxy {
    /// Forward a new local port to `upstream`.
    pub fn start(upstream: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a proxy port");
        let addr = listener.local_addr().expect("the proxy's address");
        let shared = Arc::new(Shared {
            upstream,
            cut: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            open: Mutex::new(Vec::new()),
        });
        let s = Arc::clone(&shared);
        thread::spawn(move || accept(listener, &s));
        Proxy { addr, shared }
    }

    /// The URL a client uses to go through the proxy.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Reset every connection through the proxy and refuse new ones.
    pub fn cut(&self) {
        self.shared.cut.store(true, Ordering::SeqCst);
        for s in self.shared.open.lock().unwrap().drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
    }

    /// Forward again.
    pub fn restore(&self) {
        self.shared.cut.store(false, Ordering::SeqCst);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        self.cut();
        // Wake the accepting thread so that it sees the stop.
        let _ = TcpStream::connect(self.addr);
    }
}

fn accept(listener: TcpListener, shared: &Arc<Shared>) {
    for conn in listener.incoming() {
        if shared.stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok(client) = conn else { continue };
        if shared.cut.load(Ordering::SeqCst) {
            let _ = client.shutdown(Shutdown::Both);
            continue;
        }
        let Ok(server) = TcpStream::connect(shared.upstream) else {
            let _ = client.shutdown(Shutdown::Both);
            continue;
        };
        let ends = (client.try_clone(), server.try_clone());
        let (Ok(client2), Ok(server2)) = ends else {
            continue;
        };
        {
            let mut open = shared.open.lock().unwrap();
            for s in [&client, &server] {
                if let Ok(c) = s.try_clone() {
                    open.push(c);
                }
            }
        }
        thread::spawn(move || pipe(client, server2));
        thread::spawn(move || pipe(server, client2));
    }
}

/// Copy `from` to `to` until either side closes, then close both.
fn pipe(mut from: TcpStream, mut to: TcpStream) {
    let mut buf = [0u8; 16 * 1024];
    let copied: io::Result<()> = (|| loop {
        let n = from.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        to.write_all(&buf[..n])?;
    })();
    let _ = copied;
    let _ = from.shutdown(Shutdown::Both);
    let _ = to.shutdown(Shutdown::Both);
}
