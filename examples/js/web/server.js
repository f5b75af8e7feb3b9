#!/usr/bin/env node
// The web app's own server, in the smallest form: serves index.html and sw.js, gives the page
// the VAPID public key, and registers the browser's subscription with pushq on the page's
// behalf. Node.js 18 or later, nothing else (no npm).
//
//   VAPID_PUBLIC_KEY=$(pushq webpush-key vapid.pem) \
//   PUSHQ_API_URL=http://127.0.0.1:8080 PUSHQ_API_KEY=<a key with scope devices> \
//   node examples/js/web/server.js          # then open http://localhost:8000
//
// Why a server: a pushq API key in a web page is readable by anyone who loads it, and a
// `devices` key registers any token for any user and reads every user's devices. So the key
// stays here, and this server, not the browser, decides which user a subscription belongs to
// (a real app takes it from its login session; this one from EXAMPLE_USER_REF).
//
// Variables: VAPID_PUBLIC_KEY (required), PUSHQ_API_URL (required), PUSHQ_API_KEY (required),
// EXAMPLE_USER_REF (default "demo-user"), HOST (default 127.0.0.1), PORT (default 8000; 0
// picks a free one). Prints "listening on http://HOST:PORT" once it accepts connections.
// Browsers allow service workers and push only in a secure context: https, or http on
// localhost / 127.0.0.1 as here.
"use strict";

const fs = require("fs");
const http = require("http");
const path = require("path");

function required(name) {
  const value = process.env[name];
  if (!value) {
    console.error(`server.js: ${name} is not set (see the top of ${__filename})`);
    process.exit(2);
  }
  return value;
}

const vapidPublicKey = required("VAPID_PUBLIC_KEY");
if (!/^[A-Za-z0-9_-]{87}$/.test(vapidPublicKey)) {
  console.error("server.js: VAPID_PUBLIC_KEY must be the 87 base64url characters `pushq webpush-key FILE` prints");
  process.exit(2);
}
const apiURL = required("PUSHQ_API_URL").replace(/\/+$/, "");
const apiKey = required("PUSHQ_API_KEY");
const userRef = process.env.EXAMPLE_USER_REF || "demo-user";

const files = {
  "/": ["index.html", "text/html; charset=utf-8"],
  "/index.html": ["index.html", "text/html; charset=utf-8"],
  "/sw.js": ["sw.js", "text/javascript; charset=utf-8"],
};

function send(response, status, type, body) {
  response.writeHead(status, { "Content-Type": type, "Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff" });
  response.end(body);
}

const json = (response, status, value) => send(response, status, "application/json", JSON.stringify(value));

/** The request's body as JSON (at most 8 KiB), or null. */
async function bodyJSON(request) {
  let text = "";
  for await (const chunk of request) {
    text += chunk;
    if (text.length > 8192) return null;
  }
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** A call to pushq's API with this server's key: [status, body text]. */
async function pushq(method, route, body) {
  const answer = await fetch(apiURL + "/api/v1" + route, {
    method,
    headers: { Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  return [answer.status, await answer.text()];
}

async function handle(request, response) {
  const url = new URL(request.url, "http://localhost");
  if (request.method === "GET" && files[url.pathname]) {
    const [file, type] = files[url.pathname];
    return send(response, 200, type, fs.readFileSync(path.join(__dirname, file)));
  }
  if (request.method === "GET" && url.pathname === "/config.json") {
    return json(response, 200, { applicationServerKey: vapidPublicKey });
  }
  if (url.pathname === "/subscription" && (request.method === "POST" || request.method === "DELETE")) {
    // Only this site's own pages may register (a real app checks its session and CSRF token too).
    const origin = request.headers.origin;
    if (origin !== undefined && origin !== `http://${request.headers.host}` && origin !== `https://${request.headers.host}`) {
      return json(response, 403, { error: "cross-origin request refused" });
    }
    const subscription = await bodyJSON(request);
    if (typeof subscription?.endpoint !== "string") return json(response, 400, { error: "a PushSubscription JSON with an endpoint" });
    if (request.method === "DELETE") {
      const [status, text] = await pushq("DELETE", "/devices", { device_token: subscription.endpoint, provider: "webpush" });
      // 404: nothing was registered for it, which is what the page asked for.
      if (status === 204 || status === 404) return send(response, 204, "application/json", "");
      return send(response, status, "application/json", text);
    }
    // The subscription as the browser gave it (endpoint, expirationTime, keys), plus the user
    // this server knows the browser belongs to; pushq's answer is passed back.
    const [status, text] = await pushq("PUT", "/devices", {
      endpoint: subscription.endpoint,
      expirationTime: subscription.expirationTime ?? null,
      keys: subscription.keys,
      user_ref: userRef,
    });
    return send(response, status, "application/json", text);
  }
  return json(response, 404, { error: "not found" });
}

const server = http.createServer((request, response) => {
  handle(request, response).catch((error) => {
    console.error(`server.js: ${request.method} ${request.url}: ${error.message}`);
    if (!response.headersSent) json(response, 502, { error: "pushq could not be reached" });
  });
});
server.listen(Number(process.env.PORT ?? 8000), process.env.HOST || "127.0.0.1", () => {
  const { address, port } = server.address();
  console.log(`listening on http://${address}:${port}`);
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.close(() => process.exit(0)));
