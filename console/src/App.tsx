import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { onUnauthorized } from "./api/client";
import { clearToken, getToken, isExpired, setToken } from "./auth/token";
import { Link, usePath } from "./router";

// Each surface gets its page here as it is built; until then a heading.
const ROUTES = [
  { path: "/", title: "Dashboard" },
  { path: "/pms-sync", title: "PMS sync" },
  { path: "/exports", title: "Exports" },
  { path: "/housekeeping", title: "Housekeeping" },
  { path: "/work-orders", title: "Work orders" },
  { path: "/stock-alerts", title: "Stock alerts" },
] as const;

/** A page's heading takes focus on navigation so screen readers announce it. */
function Page({ title, children }: { title: string; children: ComponentChildren }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · Villa console`;
    heading.current?.focus();
  }, [title]);
  return (
    <>
      <h1 tabIndex={-1} ref={heading}>
        {title}
      </h1>
      {children}
    </>
  );
}

/**
 * Placeholder sign-in: takes a bearer token as issued for the API. The
 * identity provider's flow replaces this form.
 */
function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [error, setError] = useState("");
  const onSubmit = (event: SubmitEvent) => {
    event.preventDefault();
    const token = String(new FormData(event.currentTarget as HTMLFormElement).get("token") ?? "").trim();
    if (isExpired(token)) return setError("This token is expired or not a JWT.");
    setToken(token);
    onSignedIn();
  };
  return (
    <main class="sign-in">
      <h1>Sign in</h1>
      <form onSubmit={onSubmit}>
        <label for="token">Access token</label>
        <input id="token" name="token" type="password" autocomplete="off" required
          aria-invalid={error ? true : undefined} aria-describedby={error ? "token-error" : undefined} />
        {error && <p id="token-error" role="alert">{error}</p>}
        <button type="submit">Sign in</button>
      </form>
    </main>
  );
}

function signedIn(): boolean {
  const token = getToken();
  return token !== null && !isExpired(token);
}

export function App() {
  const path = usePath();
  const [authed, setAuthed] = useState(signedIn);
  useEffect(() => onUnauthorized(() => setAuthed(false)), []);

  if (!authed) return <SignIn onSignedIn={() => setAuthed(true)} />;

  const route = ROUTES.find((r) => r.path === path);
  const signOut = () => {
    clearToken();
    setAuthed(false);
  };
  return (
    <>
      <header>
        <nav aria-label="Main">
          <ul>
            {ROUTES.map((r) => (
              <li key={r.path}>
                <Link to={r.path} current={r === route}>
                  {r.title}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main>
        {route ? (
          <Page title={route.title}>
            <p>Coming soon.</p>
          </Page>
        ) : (
          <Page title="Page not found">
            <p>
              <Link to="/" current={false}>
                Back to the dashboard
              </Link>
            </p>
          </Page>
        )}
      </main>
    </>
  );
}
