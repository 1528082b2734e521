// imprint viewer: the live parts. Pages work without this script; it
// follows the scope's event stream (/v1/events, same origin, the viewer's
// cookie) to move episode badges along and to fill the live feed.
"use strict";
(function () {
  const url = document.body.dataset.events;
  if (!url || !window.EventSource) return;
  const dot = document.getElementById("live-dot");
  const state = document.getElementById("live-state");
  const feed = document.querySelector("[data-feed]");
  const names = ["episode.started", "episode.finalized", "episode.abandoned", "capture.started", "capture.done",
    "capture.failed", "extraction.done", "extraction.failed"];
  const badge = { "episode.started": "open", "episode.finalized": "capturing", "capture.started": "capturing",
    "capture.done": "captured", "capture.failed": "failed" };

  function setBadge(id, value, steps, status) {
    if (!id) return;
    document.querySelectorAll("[data-episode]").forEach(function (card) {
      if (card.dataset.episode !== id) return;
      const b = card.querySelector("[data-badge]");
      if (b) { b.textContent = value; b.className = "badge " + value; }
      const s = card.querySelector("[data-steps]");
      if (s && steps !== undefined) s.textContent = String(steps);
      const st = card.querySelector("[data-status]");
      if (st && status) st.textContent = status;
    });
  }

  function episodeOf(data) {
    if (data.episode_id) return data.episode_id;
    if (data.result && data.result.episode_id) return data.result.episode_id;
    return "";
  }

  function summary(name, data) {
    const r = data.result || data;
    const parts = [];
    if (r.session_id) parts.push("session " + r.session_id);
    const ep = episodeOf(data);
    if (ep) parts.push("episode " + ep);
    if (r.trace_ids) parts.push(r.trace_ids.length + " step(s)");
    if (r.memories) parts.push("memories " + JSON.stringify(r.memories));
    if (data.error && data.error.message) parts.push("error: " + data.error.message);
    return parts.join(" · ");
  }

  function show(name, data) {
    if (!feed) return;
    const li = document.createElement("li");
    li.className = "event " + name.replace(".", "-");
    const time = document.createElement("span");
    time.className = "muted";
    time.textContent = new Date().toISOString().slice(11, 19) + " ";
    const tag = document.createElement("b");
    tag.textContent = name + " ";
    const text = document.createElement("span");
    text.textContent = summary(name, data);
    li.append(time, tag, text);
    feed.prepend(li);
    while (feed.children.length > 200) feed.lastChild.remove();
  }

  // A page left for another closes its stream: browsers keep few
  // connections per server, and a page kept in the back-forward cache
  // would hold one.
  let es = null;
  function connect() {
    es = new EventSource(url);
    es.onopen = function () {
      if (dot) dot.className = "dot on";
      if (state) state.textContent = "connected";
      document.body.dataset.live = "connected";
    };
    es.onerror = function () {
      if (dot) dot.className = "dot off";
      if (state) state.textContent = "reconnecting…";
    };
    names.forEach(function (name) {
      es.addEventListener(name, function (ev) {
        let data = {};
        try { data = JSON.parse(ev.data); } catch (e) { return; }
        const value = badge[name];
        if (value) {
          const r = data.result || {};
          const closed = data.status ? data.status + (data.closed_by ? " (" + data.closed_by + ")" : "") : undefined;
        setBadge(episodeOf(data), value, name === "capture.done" && r.trace_ids ? r.trace_ids.length : undefined,
          name === "episode.finalized" ? closed : undefined);
        }
        show(name, data);
      });
    });
  }
  connect();
  window.addEventListener("pagehide", function () { if (es) { es.close(); es = null; } });
  window.addEventListener("pageshow", function (ev) { if (ev.persisted && !es) connect(); });
})();
