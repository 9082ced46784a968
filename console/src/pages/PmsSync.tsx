// PMS sync: the PMS's health, the last runs with their status and progress
// per entity, and (managers, admins) "Sync now", which triggers a run and
// follows it live until COMPLETED or FAILED.
//
// The /reporting/sync/* routes allow 5 requests a minute per caller, the runs
// list included: every call here waits out a 429 as its Retry-After says
// (api/poll.ts) and keeps the run's last progress on screen meanwhile. A
// finished run is put into the list from its own last answer, so finishing
// costs no extra request.
import { useEffect, useRef, useState } from "preact/hooks";
import { api } from "../api/client";
import { unwrap } from "../api/errors";
import { follow, retryAfterMs, untilAllowed } from "../api/poll";
import { useApi } from "../api/useApi";
import type { components } from "../api/schema";
import { formatDateTime } from "../format";
import { useSession } from "../session";
import { Page } from "../ui/Page";
import { ErrorMessage, Loading } from "../ui/Status";
import { Bar, formatCount, RateLimitWait, StatusBadge } from "./sync/Live";
import {
  ENTITY_LABELS,
  entityPercent,
  entitySummary,
  isFinal,
  mergeRun,
  type SyncEntity,
  type SyncRun,
} from "./sync/run";

type Health = components["schemas"]["ReportingHealth"];
type SyncType = SyncRun["type"];

/** Runs shown in the list: one request of the five a minute. */
const RUNS_SHOWN = 10;
const ENTITIES: SyncEntity[] = ["listings", "reservations"];

/** A run as far as the console knows it: the trigger's answer says only its id, status and start. */
type KnownRun = Pick<SyncRun, "syncId" | "status" | "startedAt"> & Partial<SyncRun>;

function isWhole(run: KnownRun): run is SyncRun {
  return run.entities !== undefined && run.progress !== undefined && run.type !== undefined;
}

/** The health report; the API answers 503 with the same report when its database is down. */
async function loadHealth(signal: AbortSignal): Promise<Health> {
  const result = await api.GET("/reporting/health", { signal });
  const body = result.error as Partial<Health> | undefined;
  if (result.response.status === 503 && body && typeof body.status === "string") return body as Health;
  return unwrap(result);
}

function HealthReport({ health, timeZone }: { health: Health; timeZone: string }) {
  const pms = { connected: "connected", disconnected: "not reachable", not_configured: "not configured" }[health.pms];
  return (
    <dl class="facts">
      <div>
        <dt>Overall</dt>
        <dd>
          <StatusBadge status={health.status} />
        </dd>
      </div>
      <div>
        <dt>PMS</dt>
        <dd>{pms}</dd>
      </div>
      <div>
        <dt>Database</dt>
        <dd>{health.database}</dd>
      </div>
      <div>
        <dt>Redis</dt>
        <dd>{health.redis}</dd>
      </div>
      <div>
        <dt>Last finished sync</dt>
        <dd>
          {health.lastSync ? (
            <>
              <StatusBadge status={health.lastSync.status} />{" "}
              <time dateTime={health.lastSync.finishedAt}>{formatDateTime(health.lastSync.finishedAt, timeZone)}</time>
            </>
          ) : (
            "none yet"
          )}
        </dd>
      </div>
    </dl>
  );
}

/** One run: what it synchronises, when, by whom, and each entity's progress. */
function RunDetails({
  run,
  timeZone,
  live = false,
  showType = true,
}: {
  run: KnownRun;
  timeZone: string;
  /** The run being followed: its failure is announced. */
  live?: boolean;
  /** Whether to say its type (a card of the list says it in its heading). */
  showType?: boolean;
}) {
  const entities = run.entities ?? [];
  return (
    <>
      <dl class="facts">
        {showType && run.type && (
          <div>
            <dt>Type</dt>
            <dd>{run.type}</dd>
          </div>
        )}
        <div>
          <dt>Started</dt>
          <dd>
            <time dateTime={run.startedAt}>{formatDateTime(run.startedAt, timeZone)}</time>
          </dd>
        </div>
        {run.finishedAt && (
          <div>
            <dt>Finished</dt>
            <dd>
              <time dateTime={run.finishedAt}>{formatDateTime(run.finishedAt, timeZone)}</time>
            </dd>
          </div>
        )}
        {run.triggeredBy && (
          <div>
            <dt>Triggered by</dt>
            <dd>{run.triggeredBy}</dd>
          </div>
        )}
        {run.activitySince && (
          <div>
            <dt>Reservations active since</dt>
            <dd>
              <time dateTime={run.activitySince}>{formatDateTime(run.activitySince, timeZone)}</time>
            </dd>
          </div>
        )}
        <div>
          <dt>Run id</dt>
          <dd>
            <code>{run.syncId}</code>
          </dd>
        </div>
      </dl>
      {entities.length > 0 && (
        <ul class="entities">
          {entities.map((entity) => (
            <li key={entity}>
              <span class="entity-name">{ENTITY_LABELS[entity]}</span>
              <Bar
                percent={entityPercent({ status: run.status, progress: run.progress ?? {} }, entity)}
                label={`${ENTITY_LABELS[entity]} progress`}
              />
              <span class="entity-counts">{entitySummary(run.progress?.[entity], formatCount)}</span>
            </li>
          ))}
        </ul>
      )}
      {run.status === "FAILED" && (
        <p class="failure" role={live ? "alert" : undefined}>
          The run failed: {run.error ?? "the API gave no reason."}
        </p>
      )}
    </>
  );
}

export function PmsSyncPage() {
  const { may, config } = useSession();
  const timeZone = config.businessTimeZone;
  const mayTrigger = may("POST", "/reporting/sync/trigger");

  const health = useApi((signal) => loadHealth(signal), []);
  const [runsWait, setRunsWait] = useState<number | null>(null);
  const runs = useApi(
    (signal) =>
      untilAllowed(
        (s) => api.GET("/reporting/sync/runs", { params: { query: { limit: RUNS_SHOWN } }, signal: s }),
        { signal, onWait: setRunsWait },
      ),
    [],
  );

  // The run being followed (triggered here, or found going when the page opened).
  const [current, setCurrent] = useState<KnownRun | null>(null);
  const [following, setFollowing] = useState(false);
  const [followWait, setFollowWait] = useState<number | null>(null);
  const [followError, setFollowError] = useState<unknown>(undefined);
  // Finished runs followed here, put into the list without asking for it again.
  const [finished, setFinished] = useState<SyncRun[]>([]);

  const [type, setType] = useState<SyncType>("incremental");
  const [entities, setEntities] = useState<Set<SyncEntity>>(() => new Set(ENTITIES));
  const [triggering, setTriggering] = useState(false);
  const [triggerWait, setTriggerWait] = useState<number | null>(null);
  const [triggerError, setTriggerError] = useState<unknown>(undefined);

  // Everything this page started stops when it is left.
  const controller = useRef(new AbortController());
  useEffect(() => {
    const c = controller.current;
    return () => c.abort();
  }, []);

  const startFollowing = async (run: KnownRun, firstAfterMs = 0) => {
    setCurrent(run);
    setFollowing(true);
    setFollowError(undefined);
    try {
      const last = await follow(
        (signal) => api.GET("/reporting/sync/status/{syncId}", { params: { path: { syncId: run.syncId } }, signal }),
        {
          isFinal: (r) => isFinal(r.status),
          onUpdate: setCurrent,
          onWait: setFollowWait,
          firstAfterMs,
          signal: controller.current.signal,
        },
      );
      setFinished((done) => mergeRun(done, last));
      health.reload();
    } catch (error) {
      if (controller.current.signal.aborted) return;
      setFollowError(error);
    } finally {
      if (!controller.current.signal.aborted) {
        setFollowing(false);
        setFollowWait(null);
      }
    }
  };

  // A run already going when the page opens (the scheduler's, another
  // manager's) is followed too.
  const going = runs.data?.data.find((r) => !isFinal(r.status));
  useEffect(() => {
    if (going && current === null) void startFollowing(going);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [going?.syncId]);

  const trigger = async (event: SubmitEvent) => {
    event.preventDefault();
    setTriggering(true);
    setTriggerError(undefined);
    let started: KnownRun | undefined;
    // The trigger's Retry-After says when to ask for the run's status first.
    let askAfter: string | null = null;
    try {
      started = await untilAllowed(
        async (signal) => {
          const answer = await api.POST("/reporting/sync/trigger", {
            body: { type, entities: ENTITIES.filter((e) => entities.has(e)) },
            signal,
          });
          askAfter = answer.response.headers.get("Retry-After");
          return answer;
        },
        { signal: controller.current.signal, onWait: setTriggerWait },
      );
    } catch (error) {
      if (!controller.current.signal.aborted) setTriggerError(error);
    } finally {
      if (!controller.current.signal.aborted) {
        setTriggering(false);
        setTriggerWait(null);
      }
    }
    if (started) void startFollowing(started, retryAfterMs(askAfter) ?? 0);
  };

  const toggleEntity = (entity: SyncEntity, on: boolean) =>
    setEntities((now) => {
      const next = new Set(now);
      if (on) next.add(entity);
      else next.delete(entity);
      return next;
    });

  // The list: the API's page, with the runs followed here in their latest state.
  let shown: SyncRun[] = runs.data?.data ?? [];
  for (const run of finished) shown = mergeRun(shown, run);
  if (current && isWhole(current)) shown = mergeRun(shown, current);
  shown = shown.slice(0, Math.max(RUNS_SHOWN, finished.length));

  const busy = triggering || following;

  return (
    <Page title="PMS sync">
      <div class="work">
        <section aria-labelledby="pms-health">
          <h2 id="pms-health">PMS health</h2>
          {health.data ? <HealthReport health={health.data} timeZone={timeZone} /> : !health.error && <Loading />}
          <ErrorMessage error={health.error} />
        </section>

        {mayTrigger && (
          <section aria-labelledby="sync-start">
            <h2 id="sync-start">Start a sync</h2>
            <form onSubmit={trigger}>
              <fieldset>
                <legend>Type</legend>
                <label>
                  <input type="radio" name="sync-type" value="incremental" checked={type === "incremental"}
                    onChange={() => setType("incremental")} />
                  Incremental: listings, and reservations with activity since the last sync
                </label>
                <label>
                  <input type="radio" name="sync-type" value="full" checked={type === "full"}
                    onChange={() => setType("full")} />
                  Full: every listing and reservation; retires those the PMS no longer has
                </label>
              </fieldset>
              <fieldset>
                <legend>What to synchronise</legend>
                {ENTITIES.map((entity) => (
                  <label key={entity}>
                    <input type="checkbox" name="sync-entities" value={entity} checked={entities.has(entity)}
                      onChange={(e) => toggleEntity(entity, (e.currentTarget as HTMLInputElement).checked)} />
                    {ENTITY_LABELS[entity]}
                  </label>
                ))}
              </fieldset>
              <p>
                <button type="submit" disabled={busy}>
                  Sync now
                </button>
              </p>
              {triggering && triggerWait === null && <Loading label="Starting the sync…" />}
              <RateLimitWait until={triggerWait} timeZone={timeZone} what="the sync is asked for" />
              <ErrorMessage error={triggerError} />
            </form>
          </section>
        )}

        {current && (
          <section aria-labelledby="sync-current" class="current">
            <h2 id="sync-current">{following ? "Sync in progress" : "Latest sync"}</h2>
            <p role="status">
              Status: <StatusBadge status={current.status} />
            </p>
            <RunDetails run={current} timeZone={timeZone} live />
            <RateLimitWait until={followWait} timeZone={timeZone} what="its status is asked for" />
            <ErrorMessage error={followError} />
          </section>
        )}

        <section aria-labelledby="sync-runs">
          <h2 id="sync-runs">Last runs</h2>
          <RateLimitWait until={runsWait} timeZone={timeZone} what="the runs are asked for" />
          {runs.loading && !runs.data && runsWait === null && <Loading />}
          <ErrorMessage error={runs.error} />
          {runs.data &&
            (shown.length === 0 ? (
              <p>No sync has run yet.</p>
            ) : (
              <ol class="cards" aria-label="Sync runs, newest first">
                {shown.map((run) => (
                  <li key={run.syncId}>
                    <p class="card-head">
                      <StatusBadge status={run.status} />{" "}
                      <span>
                        {run.type === "full" ? "Full" : "Incremental"} sync of{" "}
                        {run.entities.map((e) => ENTITY_LABELS[e].toLowerCase()).join(" and ")}
                      </span>
                    </p>
                    <RunDetails run={run} timeZone={timeZone} showType={false} />
                  </li>
                ))}
              </ol>
            ))}
        </section>
      </div>
    </Page>
  );
}
