//! `fake-idp`: the loopback OpenID Connect provider stand-in (see the library's documentation).
//! `scripts/console-e2e` starts it for the console's OIDC sign-in test; to try the flow by hand:
//!
//! ```text
//! fake-idp --port 8098 --redirect-uri http://127.0.0.1:8080/console/signed-in
//! CONSOLE_OIDC_ISSUER=http://127.0.0.1:8098 CONSOLE_OIDC_CLIENT_ID=villa-console \
//!   AUTH_ISSUER=http://127.0.0.1:8098 AUTH_JWKS_URL=http://127.0.0.1:8098/jwks scripts/run
//! ```

use std::time::Duration;

use clap::Parser;

#[derive(Parser)]
#[command(
    about = "A loopback OpenID Connect provider for the console's sign-in (development only)"
)]
struct Args {
    #[arg(long, default_value_t = 8098)]
    port: u16,
    /// The one public client's id (the API's CONSOLE_OIDC_CLIENT_ID).
    #[arg(long, default_value = "villa-console")]
    client_id: String,
    /// A redirect URI the client may use, exactly (repeatable).
    #[arg(long = "redirect-uri", required = true)]
    redirect_uris: Vec<String>,
    /// The access tokens' audience (the API's AUTH_AUDIENCE).
    #[arg(long, default_value = "villa-platform")]
    audience: String,
    /// The claim holding the roles (the API's AUTH_ROLES_CLAIM).
    #[arg(long, default_value = "roles")]
    roles_claim: String,
    #[arg(long, default_value_t = 3600)]
    token_ttl_secs: u64,
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    tracing_subscriber::fmt().with_env_filter("info").init();
    let args = Args::parse();
    let issuer = format!("http://127.0.0.1:{}", args.port);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", args.port)).await?;
    tracing::info!(%issuer, client_id = %args.client_id, "fake-idp listening");
    let app = fake_idp::router(fake_idp::Settings {
        issuer,
        client_id: args.client_id,
        redirect_uris: args.redirect_uris,
        audience: args.audience,
        roles_claim: args.roles_claim,
        token_ttl: Duration::from_secs(args.token_ttl_secs),
    });
    axum::serve(listener, app).await
}
