import { useEffect, useState } from "preact/hooks";
import { api, onUnauthorized } from "./api/client";
import { unwrap } from "./api/errors";
import { useApi } from "./api/useApi";
import { clearToken, getToken, isExpired } from "./auth/token";
import { SignIn, SignedIn } from "./auth/SignIn";
import { DashboardPage } from "./pages/Dashboard";
import { ExportsPage } from "./pages/Exports";
import { HousekeepingPage } from "./pages/Housekeeping";
import { PmsSyncPage } from "./pages/PmsSync";
import { StockAlertsPage } from "./pages/StockAlerts";
import { WorkOrderPage } from "./pages/WorkOrder";
import { WorkOrdersPage } from "./pages/WorkOrders";
import { Link, usePath } from "./router";
import { loadConfig, makeSession, SessionProvider, type ConsoleConfig } from "./session";
import { ErrorMessage, Loading } from "./ui/Status";
import { Page } from "./ui/Page";

/** The six screens, in the navigation's order; names match their headings. */
const SCREENS = [
  { path: "/", title: "Dashboard", page: DashboardPage },
  { path: "/pms-sync", title: "PMS sync", page: PmsSyncPage },
  { path: "/exports", title: "Exports", page: ExportsPage },
  { path: "/housekeeping", title: "Housekeeping", page: HousekeepingPage },
  { path: "/work-orders", title: "Work orders", page: WorkOrdersPage },
  { path: "/stock-alerts", title: "Stock alerts", page: StockAlertsPage },
] as const;

function signedIn(): boolean {
  const token = getToken();
  return token !== null && !isExpired(token);
}

/** The page for `path`, and the screen whose link is current. */
function route(path: string) {
  const workOrder = /^\/work-orders\/([^/]+)$/.exec(path);
  if (workOrder) {
    const id = decodeURIComponent(workOrder[1]!);
    return { current: "/work-orders", body: <WorkOrderPage id={id} /> };
  }
  const screen = SCREENS.find((s) => s.path === path);
  if (screen) {
    const Screen = screen.page;
    return { current: screen.path, body: <Screen /> };
  }
  return {
    current: undefined,
    body: (
      <Page title="Page not found">
        <p>
          <Link to="/" current={false}>
            Back to the dashboard
          </Link>
        </p>
      </Page>
    ),
  };
}

function Shell({ config, onSignOut }: { config: ConsoleConfig; onSignOut: () => void }) {
  const path = usePath();
  const me = useApi((signal) => api.GET("/me", { signal }).then(unwrap), []);
  if (!me.data) {
    return <main>{me.error ? <ErrorMessage error={me.error} /> : <Loading />}</main>;
  }
  const session = makeSession(config, me.data, onSignOut);
  const { current, body } = route(path);
  return (
    <SessionProvider session={session}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header>
        <nav aria-label="Main">
          <ul>
            {SCREENS.map((s) => (
              <li key={s.path}>
                <Link to={s.path} current={s.path === current}>
                  {s.title}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <p class="who">
          <span>
            {me.data.subject} ({me.data.roles.join(", ") || "no role"})
          </span>
          <button type="button" onClick={onSignOut}>
            Sign out
          </button>
        </p>
      </header>
      <main id="main">{body}</main>
    </SessionProvider>
  );
}

export function App() {
  const path = usePath();
  const config = useApi((signal) => loadConfig(signal), []);
  const [authed, setAuthed] = useState(signedIn);
  // A 401 from any request (an expired or revoked token) leads back to sign-in.
  useEffect(() => onUnauthorized(() => setAuthed(false)), []);
  // A token that expires while the console is open: back to sign-in too.
  useEffect(() => {
    if (!authed) return;
    const timer = setInterval(() => signedIn() || setAuthed(false), 30_000);
    return () => clearInterval(timer);
  }, [authed]);

  if (!config.data) {
    return <main>{config.error ? <ErrorMessage error={config.error} /> : <Loading />}</main>;
  }
  if (path === "/signed-in") {
    return <SignedIn config={config.data} onSignedIn={() => setAuthed(true)} />;
  }
  if (!authed) return <SignIn config={config.data} onSignedIn={() => setAuthed(true)} />;
  const signOut = () => {
    clearToken();
    setAuthed(false);
  };
  return <Shell config={config.data} onSignOut={signOut} />;
}
