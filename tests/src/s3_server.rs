//! An S3-compatible server on loopback for the tests of the S3 backend: moto's (`moto[server]`
//! from PyPI, which `scripts/test` installs when it is missing), started once per test process
//! and shared by its tests, each in buckets of its own.
//!
//! The server checks every request's SigV4 signature against a key of its IAM, made at start
//! and allowed only the actions docs/storage.md asks of an operator: a request the backend signs
//! wrongly (the folder markers it signs by hand included) fails here instead of passing
//! unnoticed. moto checks the signature itself, not every rule S3 adds (it takes the declared
//! payload hash and the list of signed headers at their word).
//!
//! moto runs under a few lines of Python that take commands on their standard input and stop
//! the server when it closes. The write end of that pipe is held by this process until it ends,
//! however it ends, so no server outlives the tests.

use std::{
    io::{BufRead, BufReader, Write},
    path::PathBuf,
    process::{Child, ChildStdin, ChildStdout, Command, Stdio},
    sync::{Mutex, PoisonError},
};

use domain::settings::S3Settings;
use tokio::sync::OnceCell;
use uuid::Uuid;

pub const REGION: &str = "us-east-1";

/// Starts moto on a port the system picks, with signatures checked from the fourth request on:
/// the first three make an IAM user allowed every S3 action, and its access key. Prints
/// `<port> <access key id> <secret access key>`, then answers each command of its standard
/// input with one line, until that input closes:
/// - `bucket <name>`: creates the bucket with that key (one it already has is no error);
///   answers `ok` or `error <message>`.
///
/// moto computes the signature over its already decoded path, so keys holding characters such
/// as `'`, `(`, `&` or letters beyond ASCII would be refused however well they were signed; the
/// request's target is therefore canonicalised as S3 does it (decoded, then every byte but
/// unreserved ones percent-encoded). Request logs are turned down: they would only fill the log.
const SERVER_SCRIPT: &str = r#"
import json, logging, os, sys
from urllib.parse import quote, unquote_to_bytes, urlsplit

os.environ["INITIAL_NO_AUTH_ACTION_COUNT"] = "3"

import boto3
from botocore.config import Config
from moto.iam.access_control import S3IAMRequest
from moto.server import ThreadedMotoServer


def canonical(target):
    parts = urlsplit(target)
    path = quote(unquote_to_bytes(parts.path), safe="/~")
    # In the query, `+` is a space (form encoding, which the client's signer decodes too).
    form = lambda text: quote(unquote_to_bytes(text.replace("+", " ")), safe="~")
    pairs = sorted(
        (form(key), form(value))
        for key, _, value in (pair.partition("=") for pair in parts.query.split("&") if pair)
    )
    query = "&".join(key + "=" + value for key, value in pairs)
    return path + ("?" + query if query else "")


moto_aws_request = S3IAMRequest._create_aws_request


def aws_request(self):
    raw = getattr(self._headers, "environ", {}).get("RAW_URI")
    if raw:
        self._path = canonical(raw)
    return moto_aws_request(self)


S3IAMRequest._create_aws_request = aws_request

logging.getLogger("werkzeug").setLevel(logging.ERROR)
server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
server.start()
port = server.get_host_and_port()[1]
endpoint = "http://127.0.0.1:%d" % port
iam = boto3.client("iam", endpoint_url=endpoint, region_name="us-east-1",
                   aws_access_key_id="setup", aws_secret_access_key="setup")
iam.create_user(UserName="villa")
iam.put_user_policy(UserName="villa", PolicyName="s3", PolicyDocument=json.dumps({
    "Version": "2012-10-17",
    # What docs/storage.md asks an operator to allow, and bucket creation for these commands.
    "Statement": [{"Effect": "Allow", "Resource": "*", "Action": [
        "s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:ListBucket",
        "s3:AbortMultipartUpload", "s3:CreateBucket"]}],
}))
key = iam.create_access_key(UserName="villa")["AccessKey"]
s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                  aws_access_key_id=key["AccessKeyId"],
                  aws_secret_access_key=key["SecretAccessKey"],
                  config=Config(s3={"addressing_style": "path"}))
# Signatures must be checked from here on, or the tests would prove nothing: one signed with
# a wrong secret has to be refused.
forged = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                      aws_access_key_id=key["AccessKeyId"], aws_secret_access_key="forged",
                      config=Config(s3={"addressing_style": "path"}))
try:
    forged.create_bucket(Bucket="signature-check")
    sys.exit("moto accepted a request signed with a wrong secret: signatures are not checked")
except forged.exceptions.ClientError as e:
    if e.response["Error"]["Code"] != "SignatureDoesNotMatch":
        sys.exit("a forged request was refused for another reason: %s" % e)
print(port, key["AccessKeyId"], key["SecretAccessKey"], flush=True)

for line in sys.stdin:
    command, _, argument = line.strip().partition(" ")
    if command == "bucket" and argument:
        try:
            s3.create_bucket(Bucket=argument)
            answer = "ok"
        except s3.exceptions.BucketAlreadyOwnedByYou:
            answer = "ok"
        except Exception as e:
            answer = "error " + " ".join(str(e).split())
    else:
        answer = "error unknown command: " + " ".join(line.split())
    print(answer, flush=True)
server.stop()
"#;

static SERVER: OnceCell<S3Server> = OnceCell::const_new();

pub struct S3Server {
    /// `http://127.0.0.1:<port>`: the `S3_ENDPOINT` of the settings.
    pub endpoint: String,
    pub port: u16,
    /// The key the server made at start: the only one it accepts.
    pub access_key_id: String,
    pub secret_access_key: String,
    /// The script's standard input and output. Never dropped (the server lives in a static):
    /// its standard input stays open, and moto with it, until this process exits.
    commands: Mutex<(ChildStdin, BufReader<ChildStdout>)>,
    /// moto's messages, named when it fails.
    log: PathBuf,
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
        self.settings_with_secret(bucket, &self.secret_access_key)
    }

    /// [`settings`](Self::settings) signing with `secret_access_key` instead of the server's
    /// secret: with any other, every request must be refused.
    pub fn settings_with_secret(&self, bucket: &str, secret_access_key: &str) -> S3Settings {
        self.create_bucket(bucket);
        S3Settings {
            bucket: bucket.to_owned(),
            region: REGION.to_owned(),
            endpoint: Some(self.endpoint.clone()),
            prefix: None,
            access_key_id: Some(self.access_key_id.clone()),
            secret_access_key: Some(secret_access_key.to_owned()),
        }
    }

    /// Settings of a new, empty bucket of its own.
    pub fn fresh_settings(&self) -> S3Settings {
        self.settings(&unique_bucket())
    }

    /// Asks the script to create the bucket (signed with the server's key), and waits for its
    /// answer: a bucket is created once per test, and this keeps `settings` synchronous.
    fn create_bucket(&self, bucket: &str) {
        let answer = {
            // A test that panicked while holding the lock did so between two whole commands
            // (the assertion below runs after the lock is released): the pipe is still usable.
            let mut commands = self.commands.lock().unwrap_or_else(PoisonError::into_inner);
            let (input, output) = &mut *commands;
            let mut answer = String::new();
            // A failed write shows as no answer: the script has stopped.
            if writeln!(input, "bucket {bucket}")
                .and_then(|()| input.flush())
                .is_ok()
            {
                let _ = output.read_line(&mut answer);
            }
            answer
        };
        assert!(
            answer.trim_end() == "ok",
            "creating the bucket {bucket:?} answered {:?}; moto's messages are in {}",
            answer.trim_end(),
            self.log.display()
        );
    }
}

/// A bucket name no other test uses.
pub fn unique_bucket() -> String {
    format!("test-{}", Uuid::new_v4().simple())
}

/// Starts moto and waits for its port and key (it prints them once it listens and the key is
/// made). Its messages go to a file named in the panic when it does not start.
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
    let input = child.stdin.take().expect("moto's standard input");
    let mut output = BufReader::new(child.stdout.take().expect("moto's standard output"));
    let mut line = String::new();
    // The port and the key, or nothing when Python stops first (moto not installed).
    let _ = output.read_line(&mut line);
    let words: Vec<&str> = line.split_whitespace().collect();
    let started = match words[..] {
        [port, access_key_id, secret_access_key] => port
            .parse::<u16>()
            .ok()
            .map(|port| (port, access_key_id.to_owned(), secret_access_key.to_owned())),
        _ => None,
    };
    let Some((port, access_key_id, secret_access_key)) = started else {
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
        access_key_id,
        secret_access_key,
        commands: Mutex::new((input, output)),
        log,
        _child: child,
    }
}
