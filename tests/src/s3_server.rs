//! An S3-compatible server on loopback for the tests of the S3 backend: moto's (`pip install
//! 'moto[server]'`, which `scripts/test` does when it is missing), started once per test
//! process and shared by its tests, each in buckets of its own.
//!
//! moto runs under a few lines of Python that stop it when its standard input closes. The
//! write end of that pipe is held by this process until it ends, however it ends, so no server
//! outlives the tests.

use std::{
    io::{BufRead, BufReader, Read, Write},
    net::TcpStream,
    process::{Child, Command, Stdio},
    time::Duration,
};

use domain::settings::S3Settings;
use tokio::sync::OnceCell;
use uuid::Uuid;

/// The credentials the settings carry: moto accepts any, and requests are still signed.
pub const ACCESS_KEY_ID: &str = "testing";
pub const SECRET_ACCESS_KEY: &str = "testing";
pub const REGION: &str = "us-east-1";

/// Starts moto on a port the system picks, prints it, and serves until its standard input
/// closes. Request logs are turned down: they would only fill the log file.
const SERVER_SCRIPT: &str = r#"
import logging, sys
from moto.server import ThreadedMotoServer
logging.getLogger("werkzeug").setLevel(logging.ERROR)
server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
server.start()
print(server.get_host_and_port()[1], flush=True)
sys.stdin.read()
server.stop()
"#;

static SERVER: OnceCell<S3Server> = OnceCell::const_new();

pub struct S3Server {
    /// `http://127.0.0.1:<port>`: the `S3_ENDPOINT` of the settings.
    pub endpoint: String,
    pub port: u16,
    /// Never dropped (it lives in a static): its standard input stays open, and moto with it,
    /// until this process exits.
    _child: Child,
}

impl S3Server {
    /// The server of this test process, started by the first caller.
    pub async fn start() -> &'static S3Server {
        SERVER
            .get_or_init(|| async {
                tokio::task::spawn_blocking(spawn)
                    .await
                    .expect("starting the S3 server")
            })
            .await
    }

    /// Settings of the backend for the bucket `bucket`, created here when it does not exist
    /// yet. Bucket names are S3's: 3 to 63 lowercase letters, digits, `-` and `.`.
    pub fn settings(&self, bucket: &str) -> S3Settings {
        self.create_bucket(bucket);
        S3Settings {
            bucket: bucket.to_owned(),
            region: REGION.to_owned(),
            endpoint: Some(self.endpoint.clone()),
            prefix: None,
            access_key_id: Some(ACCESS_KEY_ID.to_owned()),
            secret_access_key: Some(SECRET_ACCESS_KEY.to_owned()),
        }
    }

    /// Settings of a new, empty bucket of its own.
    pub fn fresh_settings(&self) -> S3Settings {
        self.settings(&unique_bucket())
    }

    /// `PUT /<bucket>`, unsigned (moto does not ask for a signature), over one plain
    /// connection: a bucket is created once per test, and this keeps `settings` synchronous.
    fn create_bucket(&self, bucket: &str) {
        let mut connection =
            TcpStream::connect(("127.0.0.1", self.port)).expect("connecting to the S3 server");
        connection
            .set_read_timeout(Some(Duration::from_secs(30)))
            .expect("setting a read timeout");
        write!(
            connection,
            "PUT /{bucket} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n\
             Content-Length: 0\r\nConnection: close\r\n\r\n",
            self.port
        )
        .expect("sending the bucket's creation");
        let mut answer = String::new();
        connection
            .read_to_string(&mut answer)
            .expect("reading the bucket's creation answer");
        let status = answer.split(' ').nth(1).unwrap_or_default();
        // 409 BucketAlreadyOwnedByYou: created by an earlier call.
        assert!(
            status == "200" || answer.contains("BucketAlreadyOwnedByYou"),
            "creating the bucket {bucket:?} answered: {answer}"
        );
    }
}

/// A bucket name no other test uses.
pub fn unique_bucket() -> String {
    format!("test-{}", Uuid::new_v4().simple())
}

/// Starts moto and waits for its port (it prints it once it listens). Its messages go to a
/// file named in the panic when it does not start.
fn spawn() -> S3Server {
    let log = std::env::temp_dir().join(format!("villa-test-moto-{}.log", std::process::id()));
    let log_file = std::fs::File::create(&log).expect("creating moto's log file");
    let mut child = Command::new("python3")
        .args(["-c", SERVER_SCRIPT])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(log_file))
        .spawn()
        .expect("python3 must be on PATH to run the S3 tests");
    let stdout = child.stdout.take().expect("moto's standard output");
    let mut line = String::new();
    // Ends with the port, or with nothing when Python stops first (moto not installed).
    let _ = BufReader::new(stdout).read_line(&mut line);
    let Ok(port) = line.trim().parse::<u16>() else {
        let _ = child.kill();
        let _ = child.wait();
        let messages = std::fs::read_to_string(&log).unwrap_or_default();
        panic!(
            "moto's S3 server did not start (install it with `pip install 'moto[server]'`); \
             its messages ({}):\n{messages}",
            log.display()
        );
    };
    S3Server {
        endpoint: format!("http://127.0.0.1:{port}"),
        port,
        _child: child,
    }
}
