// Sign-in, in the mode the platform is configured for (config.json):
// development picks a role, OIDC goes to the identity provider, and
// otherwise a bearer token can be pasted.
import { useEffect, useState } from "preact/hooks";
import { apiMessage } from "../api/errors";
import { navigate } from "../router";
import type { ConsoleConfig } from "../session";
import { ErrorMessage, Loading } from "../ui/Status";
import { finishSignIn, startSignIn } from "./oidc";
import { isExpired, setToken } from "./token";

const ROLES = [
  { role: "admin", what: "everything, and the operators' pages" },
  { role: "manager", what: "every surface: reads, writes, syncs, exports" },
  { role: "staff", what: "field work: work orders, checklists, stock" },
  { role: "viewer", what: "reads only" },
] as const;

/** The console path to come back to after signing in. */
function here(): string {
  const base = import.meta.env.BASE_URL.replace(/\/$/, "");
  const path = location.pathname.startsWith(base) ? location.pathname.slice(base.length) : "/";
  return (path || "/") + location.search;
}

function DevelopmentSignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(undefined);
  const signIn = async (role: string) => {
    setBusy(role);
    setError(undefined);
    try {
      const response = await fetch("/dev/token", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ role }),
      });
      const body = await response.json().catch(() => undefined);
      if (!response.ok) throw new Error(apiMessage(body, response.status));
      setToken((body as { accessToken: string }).accessToken);
      onSignedIn();
    } catch (e) {
      setError(e);
      setBusy(null);
    }
  };
  return (
    <>
      <p>Development platform: sign in as a role.</p>
      <ul class="roles">
        {ROLES.map(({ role, what }) => (
          <li key={role}>
            <button type="button" disabled={busy !== null} onClick={() => signIn(role)}>
              Sign in as {role}
            </button>{" "}
            <span>{what}</span>
          </li>
        ))}
      </ul>
      {busy && <Loading label={`Signing in as ${busy}…`} />}
      <ErrorMessage error={error} />
    </>
  );
}

function TokenSignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [error, setError] = useState("");
  const onSubmit = (event: SubmitEvent) => {
    event.preventDefault();
    const token = String(new FormData(event.currentTarget as HTMLFormElement).get("token") ?? "").trim();
    if (isExpired(token)) return setError("This token is expired or not a JWT.");
    setToken(token);
    onSignedIn();
  };
  return (
    <form onSubmit={onSubmit}>
      <label for="token">Access token</label>
      <input id="token" name="token" type="password" autocomplete="off" required
        aria-invalid={error ? true : undefined} aria-describedby={error ? "token-error" : undefined} />
      {error && <p id="token-error" role="alert">{error}</p>}
      <button type="submit">Sign in</button>
    </form>
  );
}

function OidcSignIn({ config }: { config: ConsoleConfig }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const oidc = config.oidc!;
  const start = () => {
    setBusy(true);
    setError(undefined);
    startSignIn(oidc, here()).catch((e) => {
      setError(e);
      setBusy(false);
    });
  };
  return (
    <>
      <button type="button" class="primary" disabled={busy} onClick={start}>
        Sign in with {new URL(oidc.issuer).host}
      </button>
      {busy && <Loading label="Going to the sign-in page…" />}
      <ErrorMessage error={error} />
    </>
  );
}

export function SignIn({ config, onSignedIn }: { config: ConsoleConfig; onSignedIn: () => void }) {
  useEffect(() => {
    document.title = "Sign in · Villa console";
  }, []);
  return (
    <main class="sign-in">
      <h1>Sign in</h1>
      {config.signIn === "development" && <DevelopmentSignIn onSignedIn={onSignedIn} />}
      {config.signIn === "oidc" && <OidcSignIn config={config} />}
      {config.signIn === "token" && <TokenSignIn onSignedIn={onSignedIn} />}
    </main>
  );
}

/** /console/signed-in: where the identity provider sends the user back. */
export function SignedIn({ config, onSignedIn }: { config: ConsoleConfig; onSignedIn: () => void }) {
  const [error, setError] = useState<unknown>(undefined);
  useEffect(() => {
    if (!config.oidc) return setError(new Error("sign-in through an identity provider is not configured"));
    finishSignIn(config.oidc, new URLSearchParams(location.search)).then(
      ({ accessToken, returnTo }) => {
        setToken(accessToken);
        history.replaceState(null, "", import.meta.env.BASE_URL);
        onSignedIn();
        navigate(returnTo.startsWith("/") && !returnTo.startsWith("//") ? returnTo : "/");
      },
      setError,
    );
  }, []);
  return (
    <main class="sign-in">
      <h1>Signing in</h1>
      {error ? (
        <>
          <ErrorMessage error={error} />
          <p>
            <a href={import.meta.env.BASE_URL}>Sign in again</a>
          </p>
        </>
      ) : (
        <Loading label="Finishing the sign-in…" />
      )}
    </main>
  );
}
