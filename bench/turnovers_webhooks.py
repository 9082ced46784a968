#!/usr/bin/env python3
"""For bench/turnovers.sh, part 4: Hostaway webhook deliveries, each moving one stay's checkout,
and the time until the stay's checkout work order shows on the board at the new date.

  turnovers_webhooks.py BASE TOKEN USER PASSWORD ACCOUNT STAYS RATE

STAYS: a file, one stay a line, tab-separated: villa id, listing pms id, stay pms id, check-in,
new checkout, nights, guest name, the checkout work order's id. RATE 0: one delivery after the
other, each once the previous is on the board; RATE r > 0: a delivery every 1/r s whatever the
others do (each followed by its own poller). A delivery's time runs from just before its POST to
the first answer of GET /maintenance/turnovers?from=D&to=D&villaId=V (D the new checkout) that
lists the work order on D. Prints "count p50_ms p99_ms max_ms failed" and, on stderr, any failure.
"""

import base64
import http.client
import json
import sys
import threading
import time
import urllib.parse

POLL_SECONDS = {True: 0.02, False: 0.05}  # sequential: 20 ms; paced: 50 ms (many pollers at once)
TIMEOUT_SECONDS = 30.0


def main():
    base, token, user, password, account, stays_file, rate = sys.argv[1:8]
    rate = float(rate)
    url = urllib.parse.urlsplit(base)
    basic = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
    stays = [line.rstrip("\n").split("\t") for line in open(stays_file) if line.strip()]
    updated_on = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
    results = [None] * len(stays)
    failures = []

    def one(i, stay):
        villa, listing, pms_id, check_in, check_out, nights, guest, work_order = stay
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
        body = json.dumps({
            "event": "reservation.updated",
            "accountId": int(account),
            "data": {
                "id": int(pms_id), "listingMapId": int(listing), "arrivalDate": check_in,
                "departureDate": check_out, "nights": int(nights), "status": "modified",
                "guestName": guest, "channelId": 2000, "totalPrice": int(nights) * 2500,
                "currency": "THB", "updatedOn": updated_on,
            },
        })
        started = time.monotonic()
        conn.request("POST", "/reporting/webhooks/hostaway", body,
                     {"Authorization": basic, "Content-Type": "application/json"})
        answer = conn.getresponse()
        text = answer.read()
        if answer.status != 200 or not json.loads(text).get("changed"):
            failures.append(f"delivery {pms_id}: {answer.status} {text[:200]!r}")
            return
        path = f"/maintenance/turnovers?from={check_out}&to={check_out}&villaId={villa}"
        poll = POLL_SECONDS[rate == 0]
        while time.monotonic() - started < TIMEOUT_SECONDS:
            conn.request("GET", path, headers={"Authorization": f"Bearer {token}"})
            answer = conn.getresponse()
            text = answer.read()
            if answer.status != 200:
                failures.append(f"board for {pms_id}: {answer.status} {text[:200]!r}")
                return
            board = json.loads(text)
            days = board["data"] if isinstance(board, dict) else board
            if any(day["date"] == check_out and any(w["id"] == work_order for w in day["workOrders"])
                   for day in days):
                results[i] = (time.monotonic() - started) * 1000
                return
            time.sleep(poll)
        failures.append(f"stay {pms_id}: its work order {work_order} not on the board at {check_out} after {TIMEOUT_SECONDS:.0f} s")

    if rate == 0:
        for i, stay in enumerate(stays):
            one(i, stay)
    else:
        threads = []
        began = time.monotonic()
        for i, stay in enumerate(stays):
            delay = began + i / rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            t = threading.Thread(target=one, args=(i, stay))
            t.start()
            threads.append(t)
        for t in threads:
            t.join()
    times = sorted(r for r in results if r is not None)
    for f in failures:
        print(f, file=sys.stderr)
    if not times:
        print(f"0 0 0 0 {len(stays)}")
        return

    def pct(p):  # nearest rank
        return times[max(0, min(len(times) - 1, -(-len(times) * p // 100) - 1))]

    print(f"{len(times)} {pct(50):.0f} {pct(99):.0f} {times[-1]:.0f} {len(stays) - len(times)}")


if __name__ == "__main__":
    main()
