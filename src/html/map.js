// The report's interactive document map: one canvas, the data in a JSON data block (#map-data).
// Hover shows a document's title and topic, a click on a topic (legend or table row) picks it
// out, the search box picks out documents whose title or topic label holds the words, the
// wheel zooms and a drag pans. Opened with ?map-selftest, the page checks itself and writes the
// outcome into #map-selftest (read by headless Chromium's --dump-dom in the tests).
(function () {
  "use strict";
  var errors = [];
  window.addEventListener("error", function (e) { errors.push(String(e.message)); });
  var logError = console.error;
  console.error = function () { errors.push(Array.prototype.join.call(arguments, " ")); logError.apply(console, arguments); };

  var data = JSON.parse(document.getElementById("map-data").textContent);
  var canvas = document.getElementById("map-canvas");
  var ctx = canvas.getContext("2d");
  var tip = document.getElementById("map-tip");
  var search = document.getElementById("map-search");
  var status = document.getElementById("map-status");
  var n = data.x.length, k = data.labels.length, SPAN = 10000;
  var view = { s: 1, x: 0, y: 0 }, size = { w: 0, h: 0, base: 1 };
  var picked = -1, matches = null, matchCount = 0;
  var lowTitles = null;

  // Documents by topic, outliers apart, so each colour is set once per draw.
  var outlier = new Uint8Array(n);
  for (var o = 0; o < data.outliers.length; o++) outlier[data.outliers[o]] = 1;
  data.o = outlier;
  var byTopic = [], muted = [];
  for (var t = 0; t < k; t++) byTopic.push([]);
  for (var i = 0; i < n; i++) (data.o[i] ? muted : byTopic[data.t[i]]).push(i);

  function sx(i) { return data.x[i] * size.base * view.s + view.x; }
  function sy(i) { return (SPAN - data.y[i]) * size.base * view.s + view.y; }

  function resize() {
    var w = canvas.clientWidth || 900, h = Math.round(w * 0.62), dpr = window.devicePixelRatio || 1;
    canvas.style.height = h + "px";
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(h * dpr);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    var pad = 24, base = Math.min(w - 2 * pad, h - 2 * pad) / SPAN;
    size = { w: w, h: h, base: base };
    view = { s: 1, x: (w - SPAN * base) / 2, y: (h - SPAN * base) / 2 };
    draw();
  }

  function shown(i) {
    if (matches) return matches[i] === 1;
    return picked < 0 || data.t[i] === picked;
  }

  function dots(list, colour, alpha, r) {
    ctx.fillStyle = colour;
    ctx.globalAlpha = alpha;
    for (var j = 0; j < list.length; j++) {
      var i = list[j], x = sx(i), y = sy(i);
      if (x < -r || y < -r || x > size.w + r || y > size.h + r) continue;
      ctx.fillRect(x - r, y - r, 2 * r, 2 * r);
    }
  }

  function draw() {
    ctx.globalAlpha = 1;
    ctx.fillStyle = "#ffffff";
    ctx.fillRect(0, 0, size.w, size.h);
    var focus = picked >= 0 || matches !== null;
    var r = Math.max(1, Math.min(4, (n > 20000 ? 1.1 : n > 3000 ? 1.6 : 2.4) * Math.sqrt(view.s)));
    var alpha = n > 20000 ? 0.45 : 0.7;
    dots(muted, "#bebebe", focus ? 0.15 : 0.4, r);
    for (var t = 0; t < k; t++) dots(byTopic[t], data.colours[t], focus ? 0.08 : alpha, r);
    if (focus) {
      for (var t2 = 0; t2 < k; t2++) {
        dots(byTopic[t2].filter(shown), data.colours[t2], 0.9, r * 1.4);
      }
      if (matches) dots(muted.filter(shown), "#555555", 0.9, r * 1.4);
    }
    labels();
  }

  // Topic labels at their anchors, the larger topics first; one that would overlap a label
  // already drawn is left out (it shows when zoomed in).
  function labels() {
    ctx.globalAlpha = 1;
    ctx.font = "600 14px system-ui, -apple-system, 'Segoe UI', 'Noto Sans CJK SC', sans-serif";
    ctx.textBaseline = "middle";
    var boxes = [];
    for (var j = 0; j < data.order.length; j++) {
      var t = data.order[j];
      if (data.ax[t] === null) continue;
      var x = data.ax[t] * size.base * view.s + view.x, y = (SPAN - data.ay[t]) * size.base * view.s + view.y;
      var text = data.labels[t], w = ctx.measureText(text).width + 14, h = 22;
      var b = { x0: x - w / 2, y0: y - h / 2, x1: x + w / 2, y1: y + h / 2 };
      if (b.x1 < 0 || b.y1 < 0 || b.x0 > size.w || b.y0 > size.h) continue;
      if (boxes.some(function (o) { return b.x0 < o.x1 && o.x0 < b.x1 && b.y0 < o.y1 && o.y0 < b.y1; })) continue;
      boxes.push(b);
      var dim = picked >= 0 && picked !== t;
      ctx.globalAlpha = dim ? 0.35 : 0.92;
      ctx.fillStyle = "#ffffff";
      ctx.fillRect(b.x0, b.y0, w, h);
      ctx.strokeStyle = data.colours[t];
      ctx.lineWidth = 2;
      ctx.strokeRect(b.x0, b.y0, w, h);
      ctx.fillStyle = "#1a1a1a";
      ctx.textAlign = "center";
      ctx.fillText(text, x, y + 1);
    }
    ctx.globalAlpha = 1;
  }

  // A grid over the data for hover: cells of 1/64 of the span.
  var CELLS = 64, grid = new Map();
  for (var g = 0; g < n; g++) {
    var key = Math.floor(data.x[g] / SPAN * CELLS) * 4096 + Math.floor(data.y[g] / SPAN * CELLS);
    if (!grid.has(key)) grid.set(key, []);
    grid.get(key).push(g);
  }

  function nearest(px, py, maxPx) {
    var dx = (px - view.x) / (size.base * view.s), dy = SPAN - (py - view.y) / (size.base * view.s);
    var reach = Math.ceil(maxPx / (size.base * view.s) / SPAN * CELLS) + 1;
    var cx = Math.floor(dx / SPAN * CELLS), cy = Math.floor(dy / SPAN * CELLS);
    var best = -1, bestD = maxPx * maxPx;
    for (var a = cx - reach; a <= cx + reach; a++) {
      for (var b = cy - reach; b <= cy + reach; b++) {
        var cell = grid.get(a * 4096 + b);
        if (!cell) continue;
        for (var j = 0; j < cell.length; j++) {
          var i = cell[j];
          if ((picked >= 0 || matches) && !shown(i)) continue;
          var ex = sx(i) - px, ey = sy(i) - py, d = ex * ex + ey * ey;
          if (d <= bestD) { bestD = d; best = i; }
        }
      }
    }
    return best;
  }

  function showTip(i, px, py) {
    if (i < 0) { tip.hidden = true; return; }
    tip.textContent = "";
    var title = document.createElement("strong");
    title.textContent = data.titles[i];
    var topic = document.createElement("span");
    topic.textContent = data.labels[data.t[i]] + (data.o[i] ? " (outlier)" : "");
    tip.appendChild(title);
    tip.appendChild(document.createElement("br"));
    tip.appendChild(topic);
    tip.hidden = false;
    tip.style.left = Math.min(px + 14, size.w - 260) + "px";
    tip.style.top = (py + 14) + "px";
  }

  function local(e) {
    var r = canvas.getBoundingClientRect();
    return [e.clientX - r.left, e.clientY - r.top];
  }

  var drag = null;
  canvas.addEventListener("mousedown", function (e) { drag = local(e); });
  window.addEventListener("mouseup", function () { drag = null; });
  canvas.addEventListener("mouseleave", function () { tip.hidden = true; });
  canvas.addEventListener("mousemove", function (e) {
    var p = local(e);
    if (drag) {
      view.x += p[0] - drag[0];
      view.y += p[1] - drag[1];
      drag = p;
      tip.hidden = true;
      draw();
      return;
    }
    showTip(nearest(p[0], p[1], 8), p[0], p[1]);
  });
  canvas.addEventListener("wheel", function (e) {
    e.preventDefault();
    var p = local(e), f = Math.exp(-e.deltaY * 0.0015), s = Math.min(200, Math.max(0.5, view.s * f));
    f = s / view.s;
    view.x = p[0] - (p[0] - view.x) * f;
    view.y = p[1] - (p[1] - view.y) * f;
    view.s = s;
    draw();
  }, { passive: false });

  function pick(t) {
    picked = picked === t ? -1 : t;
    var items = document.querySelectorAll("#map-legend button");
    for (var j = 0; j < items.length; j++) {
      items[j].setAttribute("aria-pressed", String(Number(items[j].dataset.index) === picked));
    }
    draw();
  }
  document.getElementById("map-legend").addEventListener("click", function (e) {
    var b = e.target.closest("button");
    if (b) pick(Number(b.dataset.index));
  });
  var rows = document.querySelectorAll("tr[data-topic]");
  for (var r = 0; r < rows.length; r++) {
    rows[r].addEventListener("click", function (e) {
      if (e.target.closest("a")) return;
      var index = data.ids.indexOf(Number(this.dataset.topic));
      if (index >= 0) { pick(index); canvas.scrollIntoView({ block: "center" }); }
    });
  }

  function find(q) {
    q = q.trim().toLowerCase();
    if (q.length < 2) { matches = null; status.textContent = ""; draw(); return; }
    if (!lowTitles) lowTitles = data.titles.map(function (s) { return s.toLowerCase(); });
    var topicHit = data.labels.map(function (l) { return l.toLowerCase().indexOf(q) >= 0; });
    matches = new Uint8Array(n);
    matchCount = 0;
    for (var i = 0; i < n; i++) {
      if (topicHit[data.t[i]] || lowTitles[i].indexOf(q) >= 0) { matches[i] = 1; matchCount++; }
    }
    status.textContent = matchCount.toLocaleString("en-US") + " of " + n.toLocaleString("en-US") + " documents match";
    draw();
  }
  search.addEventListener("input", function () { find(search.value); });
  document.getElementById("map-reset").addEventListener("click", function () {
    search.value = ""; matches = null; picked = -1; status.textContent = ""; pick(-1); resize();
  });
  window.addEventListener("resize", resize);
  resize();

  if (/[?&]map-selftest\b/.test(location.search)) selftest();

  // Checks the page as a reader would use it; writes one line per check into #map-selftest.
  function selftest() {
    var out = [], ok = true;
    function check(name, pass, detail) { out.push((pass ? "ok " : "FAILED ") + name + ": " + detail); ok = ok && pass; }
    var px = ctx.getImageData(0, 0, canvas.width, canvas.height).data, inked = 0;
    for (var p = 0; p < px.length; p += 4) if (px[p] < 250 || px[p + 1] < 250 || px[p + 2] < 250) inked++;
    check("points drawn", inked > 0 && n > 0, n + " documents, " + inked + " inked pixels");
    var i = 0;
    while (i < n && data.o[i]) i++;
    if (i === n) i = 0;
    var rect = canvas.getBoundingClientRect();
    var cx = Math.round(rect.left + sx(i)), cy = Math.round(rect.top + sy(i));
    canvas.dispatchEvent(new MouseEvent("mousemove", { clientX: cx, clientY: cy, bubbles: true }));
    var hit = nearest(cx - rect.left, cy - rect.top, 8);
    check("hover", !tip.hidden && hit >= 0 && tip.textContent.indexOf(data.titles[hit]) === 0, JSON.stringify(tip.textContent.slice(0, 80)));
    var word = (data.titles[i].match(/[\p{L}\p{N}]{4,}/u) || [data.titles[i]])[0];
    search.value = word;
    search.dispatchEvent(new Event("input"));
    check("search", matchCount >= 1 && status.textContent.indexOf("match") > 0, JSON.stringify(word) + ": " + status.textContent);
    search.value = "";
    search.dispatchEvent(new Event("input"));
    var first = document.querySelector("#map-legend button");
    first.click();
    check("topic click", picked === Number(first.dataset.index), "picked " + picked);
    first.click();
    var before = view.s;
    canvas.dispatchEvent(new WheelEvent("wheel", { deltaY: -300, clientX: rect.left + size.w / 2, clientY: rect.top + size.h / 2, bubbles: true, cancelable: true }));
    check("zoom", view.s > before, "scale " + before.toFixed(2) + " -> " + view.s.toFixed(2));
    check("no errors", errors.length === 0, errors.length ? errors.join(" | ") : "none");
    var el = document.getElementById("map-selftest");
    el.textContent = (ok ? "map selftest passed\n" : "map selftest FAILED\n") + out.join("\n");
    el.hidden = false;
    el.setAttribute("data-ok", String(ok));
  }
})();
