#!/usr/bin/env node
// A producer in JavaScript (Node.js): enqueue one APNs notification with node-postgres (`pg`),
// and, given a browser's push subscription, one Web Push notification beside it in the same
// transaction; then wait for their outcomes.
//
//   NODE_PATH=.pushq/node_modules   # node-pg from Debian, unpacked by scripts/install-deps (README.md)
//   PUSHQ_DATABASE_URL=postgresql://pushq@db.internal/pushq node examples/js/enqueue.js DEVICE_TOKEN [SUBSCRIPTION.json]
//
// SUBSCRIPTION.json is a PushSubscription as the browser gives it (`JSON.stringify(subscription)`:
// {"endpoint": …, "expirationTime": null, "keys": {"p256dh": …, "auth": …}}); web/ makes one.
// Prints each row's id, then its final status; exits 0 only if every row was sent. A producer
// usually does not wait: the outcome stays in the row (status, last_status, last_reason).
// The contract: docs/producers.md; Web Push rows: docs/webpush.md.
"use strict";

const fs = require("fs");
const { Client } = require("pg");

const FINAL = new Set(["sent", "failed", "expired", "cancelled"]);

function usage(message) {
  if (message) console.error(`enqueue.js: ${message}`);
  console.error("usage: enqueue.js DEVICE_TOKEN [SUBSCRIPTION.json]");
  process.exit(2);
}

/** The subscription in `path`, checked for the fields a Web Push row needs. */
function readSubscription(path) {
  let subscription;
  try {
    subscription = JSON.parse(fs.readFileSync(path, "utf8"));
  } catch (error) {
    usage(`${path} is not a PushSubscription JSON: ${error.message}`);
  }
  const { endpoint, keys } = subscription ?? {};
  if (typeof endpoint !== "string" || !endpoint.startsWith("https://")) usage(`${path}: "endpoint" must be an https URL`);
  if (typeof keys?.p256dh !== "string" || typeof keys?.auth !== "string") usage(`${path}: "keys" must have "p256dh" and "auth"`);
  return { endpoint, keys: { p256dh: keys.p256dh, auth: keys.auth } };
}

async function main() {
  const [token, subscriptionFile, ...rest] = process.argv.slice(2);
  if (!token || rest.length > 0) usage();
  const subscription = subscriptionFile ? readSubscription(subscriptionFile) : null;

  const client = new Client({ connectionString: process.env.PUSHQ_DATABASE_URL });
  await client.connect();
  const ids = [];
  try {
    // One transaction: in an application, the change that caused the notifications (the
    // order's new state) would be written in it too, so all commit or none does.
    await client.query("BEGIN");
    const apns = { aps: { alert: { title: "Order 1042", body: "Your order has shipped" }, sound: "default" } };
    const { rows: [apnsRow] } = await client.query(
      `INSERT INTO pushq.notifications (device_token, payload, expires_at, metadata)
       VALUES ($1, $2, now() + interval '1 hour', $3)
       RETURNING id`,
      [token, JSON.stringify(apns), JSON.stringify({ order: 1042, example: "js" })],
    );
    ids.push(apnsRow.id);
    if (subscription) {
      // A Declarative Web Push message (the browser can show it without running a service
      // worker); pushq encrypts payload::text as stored. device_token is the endpoint byte for
      // byte, webpush_keys the subscription's keys as the browser gave them; collapse_id is
      // the Topic (a newer message with it replaces this one while undelivered), priority the
      // Urgency (10: high).
      const web = {
        web_push: 8030,
        notification: { title: "Order 1042", body: "Your order has shipped", navigate: "https://shop.example.com/orders/1042" },
      };
      const { rows: [webRow] } = await client.query(
        `INSERT INTO pushq.notifications (provider, device_token, webpush_keys, payload, collapse_id, priority, expires_at, metadata)
         VALUES ('webpush', $1, $2, $3, 'order-1042', 10, now() + interval '1 hour', $4)
         RETURNING id`,
        [subscription.endpoint, JSON.stringify(subscription.keys), JSON.stringify(web),
         JSON.stringify({ order: 1042, example: "js" })],
      );
      ids.push(webRow.id);
    }
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  }
  for (const id of ids) console.log(`notification ${id}: enqueued`);

  const deadline = Date.now() + 60_000;
  let rows;
  for (;;) {
    ({ rows } = await client.query(
      "SELECT id, provider, status, last_status, last_reason FROM pushq.notifications WHERE id = ANY($1::bigint[]) ORDER BY id",
      [ids],
    ));
    if (rows.every((row) => FINAL.has(row.status)) || Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  await client.end();

  for (const row of rows) {
    console.log(`notification ${row.id}: ${row.status} (HTTP ${row.last_status}) ${row.last_reason ?? ""}`.trimEnd());
  }
  return rows.every((row) => row.status === "sent") ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(`enqueue.js: ${error.message}`);
    process.exit(1);
  },
);
