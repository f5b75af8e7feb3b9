// The service worker: shows what pushq sends to this browser.
//
// A Web Push row's payload arrives here decrypted by the browser, byte for byte as the row's
// `payload`. Two forms are shown:
//   - Declarative Web Push (what examples/js/enqueue.js sends; Safari 18.4+ shows these itself,
//     even without a service worker):
//       {"web_push": 8030, "notification": {"title": …, "body": …, "navigate": "https://…", …}}
//   - a plain object: {"title": …, "body": …, "url": "https://…"} (or {"notification": {…}}).
"use strict";

/** The notification a payload asks for: { title, options }. */
function notificationFrom(message) {
  const declarative = message.web_push === 8030 && typeof message.notification === "object";
  const n = declarative ? message.notification : message.notification ?? message;
  const navigate = n.navigate ?? n.url;
  return {
    title: typeof n.title === "string" && n.title !== "" ? n.title : "Notification",
    options: {
      body: n.body,
      icon: n.icon,
      tag: n.tag,
      lang: n.lang,
      dir: n.dir,
      silent: n.silent,
      requireInteraction: n.requireInteraction,
      data: { navigate: typeof navigate === "string" ? navigate : null },
    },
  };
}

self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));

self.addEventListener("push", (event) => {
  let message;
  try {
    message = event.data ? event.data.json() : {};
  } catch {
    message = { body: event.data.text() };  // not JSON: shown as text
  }
  const { title, options } = notificationFrom(message ?? {});
  // Shown, then told to the site's open pages (which log it).
  const shown = self.registration.showNotification(title, options)
    .then(() => self.clients.matchAll({ type: "window" }))
    .then((pages) => pages.forEach((page) => page.postMessage({ type: "push-shown", title })));
  event.waitUntil(shown);
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const target = event.notification.data?.navigate;
  if (target) event.waitUntil(self.clients.openWindow(target));
});

// The browser replaced the subscription (it expired, or the push service rotated it): register
// the new one, as the page does, so rows keep reaching this browser.
self.addEventListener("pushsubscriptionchange", (event) => {
  const renew = async () => {
    const subscription = event.newSubscription
      ?? await self.registration.pushManager.subscribe(event.oldSubscription?.options ?? { userVisibleOnly: true });
    await fetch("/subscription", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(subscription),
    });
  };
  event.waitUntil(renew());
});
