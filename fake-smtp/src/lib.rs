//! A loopback stand-in for an SMTP relay (RFC 5321's plain exchange: EHLO, MAIL, RCPT, DATA),
//! for development and the tests: it accepts every message and keeps it, in memory and, when
//! given a folder, as one `.eml` file per message. No TLS and no authentication: it listens on
//! loopback only, and `SMTP_URL=smtp://127.0.0.1:<port>` points the platform's `mail` worker at
//! it. Never in production.

use std::{
    net::SocketAddr,
    path::PathBuf,
    sync::{Arc, Mutex},
};

use tokio::{
    io::{AsyncBufReadExt, AsyncWriteExt, BufReader},
    net::{TcpListener, TcpStream},
};

/// A message as the relay received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mail {
    pub from: String,
    pub to: Vec<String>,
    /// The message (headers and body) as sent, dot-unstuffed, lines ending in CRLF.
    pub data: String,
}

impl Mail {
    /// The value of header `name` (first occurrence, case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let head = self.data.split("\r\n\r\n").next()?;
        head.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.trim().eq_ignore_ascii_case(name).then(|| value.trim())
        })
    }

    /// The body after the headers.
    pub fn body(&self) -> &str {
        self.data
            .split_once("\r\n\r\n")
            .map_or("", |(_, body)| body)
    }
}

/// The longest message kept: a bigger one is refused (552), so a client cannot fill memory.
pub const MAX_MESSAGE_BYTES: usize = 10 << 20;
/// The longest command or text line (RFC 5321 says 1000 with CRLF; some slack).
const MAX_LINE: usize = 4096;

/// What the relay received, shared with whoever reads it.
#[derive(Debug, Clone, Default)]
pub struct Mailbox {
    mails: Arc<Mutex<Vec<Mail>>>,
    folder: Option<PathBuf>,
}

impl Mailbox {
    /// Also writes each message to `folder` as `<n>.eml`.
    pub fn with_folder(folder: PathBuf) -> std::io::Result<Self> {
        std::fs::create_dir_all(&folder)?;
        Ok(Self {
            mails: Arc::default(),
            folder: Some(folder),
        })
    }

    pub fn mails(&self) -> Vec<Mail> {
        self.mails.lock().map(|m| m.clone()).unwrap_or_default()
    }

    fn keep(&self, mail: Mail) {
        let Ok(mut mails) = self.mails.lock() else {
            return;
        };
        if let Some(folder) = &self.folder {
            let name = folder.join(format!(
                "{}-{}.eml",
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_millis()),
                mails.len() + 1
            ));
            if let Err(e) = std::fs::write(&name, &mail.data) {
                eprintln!("fake-smtp: cannot write {}: {e}", name.display());
            }
            println!(
                "fake-smtp: mail to {} ({}) in {}",
                mail.to.join(", "),
                mail.header("Subject").unwrap_or(""),
                name.display()
            );
        }
        mails.push(mail);
    }
}

/// Binds 127.0.0.1:`port` (0: any free port) and serves in the background.
pub async fn start(port: u16, mailbox: Mailbox) -> std::io::Result<SocketAddr> {
    let listener = TcpListener::bind(("127.0.0.1", port)).await?;
    let addr = listener.local_addr()?;
    tokio::spawn(serve(listener, mailbox));
    Ok(addr)
}

/// Serves every connection of `listener`.
pub async fn serve(listener: TcpListener, mailbox: Mailbox) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let mailbox = mailbox.clone();
        tokio::spawn(async move {
            let _ = session(stream, mailbox).await;
        });
    }
}

/// Reads one line (without its CRLF); `None` at the end of the stream or past [`MAX_LINE`].
async fn line(reader: &mut BufReader<tokio::net::tcp::OwnedReadHalf>) -> Option<String> {
    let mut buf = Vec::new();
    let n = (&mut *reader)
        .take(MAX_LINE as u64)
        .read_until(b'\n', &mut buf)
        .await
        .ok()?;
    if n == 0 || !buf.ends_with(b"\n") {
        return None;
    }
    let text = String::from_utf8_lossy(&buf);
    Some(text.trim_end_matches(['\r', '\n']).to_owned())
}

use tokio::io::AsyncReadExt as _;

async fn session(stream: TcpStream, mailbox: Mailbox) -> std::io::Result<()> {
    let (read, mut write) = stream.into_split();
    let mut reader = BufReader::new(read);
    write.write_all(b"220 fake-smtp ESMTP ready\r\n").await?;
    let mut from = String::new();
    let mut to = Vec::new();
    while let Some(command) = line(&mut reader).await {
        let verb = command
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_ascii_uppercase();
        let argument = |prefix: &str| {
            let upper = command.to_ascii_uppercase();
            upper.find(prefix).map(|i| {
                command[i + prefix.len()..]
                    .trim()
                    .trim_start_matches('<')
                    .split('>')
                    .next()
                    .unwrap_or("")
                    .to_owned()
            })
        };
        let reply: &[u8] = match verb.as_str() {
            "EHLO" => b"250-fake-smtp\r\n250-8BITMIME\r\n250 SMTPUTF8\r\n",
            "HELO" => b"250 fake-smtp\r\n",
            "MAIL" => {
                from = argument("FROM:").unwrap_or_default();
                to.clear();
                b"250 OK\r\n"
            }
            "RCPT" => match argument("TO:") {
                Some(address) if to.len() < 100 => {
                    to.push(address);
                    b"250 OK\r\n"
                }
                _ => b"452 too many recipients\r\n",
            },
            "DATA" if to.is_empty() => b"503 RCPT first\r\n",
            "DATA" => {
                write.write_all(b"354 end with <CRLF>.<CRLF>\r\n").await?;
                let mut data = String::new();
                let mut too_big = false;
                loop {
                    let Some(text) = line(&mut reader).await else {
                        return Ok(());
                    };
                    if text == "." {
                        break;
                    }
                    // Dot-unstuffing (RFC 5321, 4.5.2).
                    let text = text.strip_prefix('.').unwrap_or(&text);
                    if data.len() + text.len() + 2 > MAX_MESSAGE_BYTES {
                        too_big = true;
                    } else {
                        data.push_str(text);
                        data.push_str("\r\n");
                    }
                }
                if too_big {
                    b"552 message too big\r\n"
                } else {
                    mailbox.keep(Mail {
                        from: std::mem::take(&mut from),
                        to: std::mem::take(&mut to),
                        data,
                    });
                    b"250 OK: queued\r\n"
                }
            }
            "RSET" => {
                from.clear();
                to.clear();
                b"250 OK\r\n"
            }
            "NOOP" => b"250 OK\r\n",
            "QUIT" => {
                write.write_all(b"221 bye\r\n").await?;
                return Ok(());
            }
            _ => b"502 command not implemented\r\n",
        };
        write.write_all(reply).await?;
    }
    Ok(())
}
