//! `livemove explore`: a web page to walk a configuration's states.
//!
//! The page and its server are the project's own. From Stateright it takes
//! the model's `as_svg` picture of each state; the state view, the property
//! panel and every counterexample come from this crate's view and checker,
//! so the page says exactly what `livemove check` says. (Stateright's own
//! Explorer lists only the properties that fit its `Property` type, shows
//! states as Rust debug output, and its search finds counterexamples that
//! need not be the shortest.)

mod api;

use super::{resolve, EXIT_FAIL, EXIT_USAGE};
use livemove_model::MoveModel;
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use tiny_http::{Header, Method, Response, Server, StatusCode};

#[derive(clap::Args)]
pub struct Args {
    /// A config name (see `livemove check --list`; a group is refused).
    #[arg(long)]
    config: String,
    /// Address to bind, `IP:PORT`; loopback unless told otherwise (port 0
    /// picks a free port and prints it).
    #[arg(long, default_value = "127.0.0.1:3000")]
    addr: String,
    /// Explore a mutant of the protocol (see `livemove zoo`).
    #[arg(long)]
    mutant: Option<String>,
}

const PAGE: &str = include_str!("page.html");

pub fn run(a: Args) -> u8 {
    let mut cfgs = match resolve(&a.config, a.mutant.as_deref()) {
        Ok(c) => c,
        Err(code) => return code,
    };
    if cfgs.len() != 1 {
        eprintln!(
            "error: --config: `{}` is a group; explore takes one config",
            a.config
        );
        return EXIT_USAGE;
    }
    let addr: SocketAddr = match a.addr.parse() {
        Ok(x) => x,
        Err(e) => {
            let why = match a.addr.rsplit_once(':') {
                Some((_, p)) if p.parse::<u16>().is_err() && p.parse::<u64>().is_ok() => {
                    format!("port {p} is not in 0..65535")
                }
                _ => e.to_string(),
            };
            eprintln!(
                "error: --addr `{}`: not an address of the form IP:PORT ({why}); for example --addr 127.0.0.1:3000, or port 0 for any free port",
                a.addr
            );
            return EXIT_USAGE;
        }
    };
    // Bind first: the URL is announced only once the port is ours.
    let listener = match TcpListener::bind(addr) {
        Ok(l) => l,
        Err(e) => {
            eprintln!(
                "error: --addr {addr}: cannot listen there: {e}; pick another port with --addr, for example --addr 127.0.0.1:{} (or port 0 for any free port)",
                addr.port().wrapping_add(1).max(1024)
            );
            return EXIT_USAGE;
        }
    };
    let bound = listener.local_addr().unwrap_or(addr);
    let server = match Server::from_listener(listener, None) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: --addr {bound}: cannot serve: {e}");
            return EXIT_FAIL;
        }
    };
    let m = Arc::new(MoveModel::new(cfgs.remove(0)));
    eprintln!(
        "Explorer for `{}`{} on http://{bound}/ (Ctrl-C to stop)",
        m.cfg.name,
        m.cfg
            .mutant
            .map(|x| format!(" (mutant {})", x.name()))
            .unwrap_or_default()
    );
    let search = api::Search::default();
    for rq in server.incoming_requests() {
        let (code, kind, body) = route(&m, &search, rq.method(), rq.url());
        let header = Header::from_bytes("Content-Type", kind).expect("a valid header");
        let resp = Response::from_string(body)
            .with_status_code(StatusCode(code))
            .with_header(header);
        // A browser that went away is not the server's problem.
        let _ = rq.respond(resp);
    }
    EXIT_FAIL
}

/// Status, content type and body of one request.
fn route(
    m: &Arc<MoveModel>,
    search: &api::Search,
    method: &Method,
    url: &str,
) -> (u16, &'static str, String) {
    const JSON: &str = "application/json";
    match (method, url) {
        (Method::Get, "/") => (200, "text/html; charset=utf-8", PAGE.to_string()),
        (Method::Get, "/api/info") => (200, JSON, api::info(m).to_string()),
        (Method::Get, "/api/check") => (200, JSON, search.status().to_string()),
        (Method::Post, "/api/check") => {
            search.start(Arc::clone(m));
            (200, JSON, search.status().to_string())
        }
        (Method::Get, u) if u.starts_with("/api/state") => {
            match api::state(m, u.trim_start_matches("/api/state")) {
                Ok(v) => (200, JSON, v.to_string()),
                Err(e) => (400, JSON, serde_json::json!({ "error": e }).to_string()),
            }
        }
        _ => (404, "text/plain", "not found".into()),
    }
}
