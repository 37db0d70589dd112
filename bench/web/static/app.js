// The teaching page's script: forms in, the model's answers out. Every
// figure comes from bhsim.call (the Go model in WebAssembly); this script
// only lays them out.
"use strict";

const $ = (sel) => document.querySelector(sel);
const timings = (window.bhsimTimings = { start: performance.now() });
const statusLine = $("#status");

function say(text, isError) {
  statusLine.textContent = text;
  statusLine.classList.toggle("error", !!isError);
  if (isError) console.warn(text);
}

// call runs a view of the model; it lets the page paint "running" first.
async function call(name, req) {
  say("Running " + name + "…");
  await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  const t0 = performance.now();
  const answer = JSON.parse(window.bhsim.call(name, JSON.stringify(req)));
  const ms = performance.now() - t0;
  if (answer.error) {
    say("The model refused: " + answer.error, true);
    return null;
  }
  say("Ran " + name + " in " + (ms / 1000).toFixed(2) + " s.");
  return answer.result;
}

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else e.setAttribute(k, v);
  }
  for (const k of kids) e.append(k);
  return e;
}

function fill(select, values, chosen) {
  select.replaceChildren(...values.map((v) => el("option", { value: v, text: v })));
  if (chosen !== undefined) select.value = chosen;
}

function sizeName(n) {
  n = Number(n);
  return n >= 1024 ? n / 1024 + "K" : String(n);
}

// --- tabs -------------------------------------------------------------
const tabs = [...document.querySelectorAll('[role="tab"]')];
function selectTab(tab) {
  for (const t of tabs) {
    const on = t === tab;
    t.setAttribute("aria-selected", on);
    t.tabIndex = on ? 0 : -1;
    document.getElementById(t.getAttribute("aria-controls")).hidden = !on;
  }
  tab.focus();
  const first = views[tab.id];
  if (first && !first.ran) {
    first.ran = true;
    first.run();
  }
}
for (const t of tabs) {
  t.addEventListener("click", () => selectTab(t));
  t.addEventListener("keydown", (e) => {
    const i = tabs.indexOf(t);
    if (e.key === "ArrowRight") selectTab(tabs[(i + 1) % tabs.length]);
    if (e.key === "ArrowLeft") selectTab(tabs[(i + tabs.length - 1) % tabs.length]);
  });
}

// A stepper: a range input with previous and next buttons, and ← → on
// the view.
function stepper(prefix, rangeId, posId, show) {
  const range = document.getElementById(rangeId);
  const s = { n: 0, go(i) {
    if (s.n === 0) return;
    i = Math.max(0, Math.min(s.n - 1, i));
    range.value = i;
    document.getElementById(posId).textContent = (i + 1) + " of " + s.n;
    show(i);
  } };
  range.addEventListener("input", () => s.go(Number(range.value)));
  $("#" + prefix + "-prev").addEventListener("click", () => s.go(Number(range.value) - 1));
  $("#" + prefix + "-next").addEventListener("click", () => s.go(Number(range.value) + 1));
  range.closest("section").addEventListener("keydown", (e) => {
    if (e.target.matches("input, textarea, select")) return; // they have keys of their own (a range steps itself)
    if (e.key === "ArrowRight") { s.go(Number(range.value) + 1); e.preventDefault(); }
    if (e.key === "ArrowLeft") { s.go(Number(range.value) - 1); e.preventDefault(); }
  });
  s.reset = (n) => { s.n = n; range.max = Math.max(0, n - 1); s.go(0); };
  return s;
}

// --- block size -------------------------------------------------------
async function runDD() {
  const f = $("#dd-form");
  const sizes = [...f.querySelectorAll('input[name="size"]:checked')].map((c) => c.value);
  const kernels = [f.kernelA.value];
  if (f.kernelB.value !== f.kernelA.value) kernels.push(f.kernelB.value);
  const r = await call("dd", { machine: f.machine.value, kernels, blockSizes: sizes, layout: f.layout.value,
    bs: f.bs.value, count: Number(f.count.value), op: f.op.value, profile: f.profile.value, costs: f.costs.value });
  if (!r) return;
  $("#dd-command").textContent = r.command;
  const out = $("#dd-out");
  out.replaceChildren();
  const max = Math.max(...r.rows.map((x) => x.mbps || 0), 1);
  const chart = $("#dd-chart");
  chart.replaceChildren();
  kernels.forEach((k, ki) => {
    const cls = ki === 0 ? "ka" : "kb";
    const t = el("table", { class: "dd-table " + cls, "data-kernel": k },
      el("caption", {}, el("span", { class: "swatch", "aria-hidden": "true" }), "Kernel " + k + (ki === 0 ? " (solid bars)" : " (striped bars)")));
    t.append(el("tr", {}, ...["block size", "bios/page", "requests/MiB", "MB/s", "bottleneck"].map((h) => el("th", { scope: "col", text: h }))));
    for (const row of r.rows.filter((x) => x.kernel === k)) {
      const tr = el("tr", { "data-blocksize": row.block_size_choice }, el("th", { scope: "row", text: sizeName(row.block_size_choice) }));
      if (row.error) tr.append(el("td", { class: "refused", colspan: "4", text: "refused: " + row.error }));
      else tr.append(el("td", { class: "bios", text: row.biosText }), el("td", { class: "reqs", text: row.requestsText }),
        el("td", { class: "mbps", text: row.mbpsText }), el("td", { class: "bottleneck", text: row.bottleneck }));
      t.append(tr);
    }
    out.append(t);
  });
  for (const bs of sizes) {
    const bars = el("div", { class: "bars" });
    kernels.forEach((k, ki) => {
      const row = r.rows.find((x) => x.kernel === k && x.block_size_choice === bs);
      const label = k + ": " + (row.error ? "refused" : row.mbpsText + " MB/s");
      const w = row.error ? 0 : (100 * row.mbps) / max;
      bars.append(el("div", { class: "bar " + (ki === 0 ? "ka" : "kb"), style: "width:" + Math.max(w, 1) + "%", role: "img", "aria-label": label },
        el("span", { text: label })));
    });
    chart.append(el("div", { class: "row" }, el("span", { text: "bsz " + sizeName(bs) }), bars));
  }
  shown();
}

// shown notes when the first view's figures are on the screen.
function shown() {
  if (!timings.firstView) timings.firstView = performance.now() - timings.start;
}

// --- a page's buffers ---------------------------------------------------
let bufFrames = [];
const bufStepper = stepper("buf", "buf-frame", "buf-pos", (i) => {
  const fr = bufFrames[i];
  $("#buf-event").textContent = "[" + fr.phase + "] " + fr.event + ":";
  $("#buf-note").textContent = fr.note;
  const folio = fr.folio;
  $("#buf-folio").textContent = folio.cached ? "(" + folio.pages + " page" + (folio.pages > 1 ? "s" : "") + "; " + ((folio.flags || []).join(", ") || "no flags") + ")" : "(not cached)";
  const ring = el("div", { class: "ring", role: "list", "aria-label": "buffer ring" });
  (folio.buffers || []).forEach((b, j) => {
    if (j > 0) ring.append(el("span", { class: "link", "aria-hidden": "true", text: "→" }));
    const st = b.state || [];
    const cls = ["bh", st.includes("dirty") ? "dirty" : "clean", st.includes("locked") ? "locked" : ""].join(" ");
    ring.append(el("div", { class: cls, role: "listitem" },
      el("div", { class: "nr", text: b.block < 0 ? "unmapped" : "block " + b.block }),
      el("div", { class: "letters", text: b.letters }),
      el("div", { class: "words", text: st.join(" ") || "no state" })));
  });
  if ((folio.buffers || []).length > 1) ring.append(el("span", { class: "link", text: "↩ b_this_page back to the first" }));
  if (!(folio.buffers || []).length) ring.append(el("p", { text: folio.cached ? "no buffers yet" : "the page is not in the page cache" }));
  $("#buf-ring").replaceChildren(ring);
  const prev = i > 0 ? bufFrames[i - 1] : null;
  $("#buf-bios").replaceChildren(...(fr.bios || []).map((b, j) => el("li", { class: prev && j >= (prev.bios || []).length ? "new" : "",
    text: b.op + " sectors " + b.sector + "+" + b.sectors + (b.request >= 0 ? " → request " + (b.request + 1) : "") })));
  $("#buf-reqs").replaceChildren(...(fr.requests || []).map((q) => el("li", {
    text: q.op + " sectors " + q.sector + "+" + q.sectors + ", " + q.bios + " bio" + (q.bios > 1 ? "s" : "") + (q.completed ? ", completed" : q.issued ? ", issued" : ", in the plug") })));
});
async function runBuffers() {
  const f = $("#buf-form");
  const r = await call("buffers", { kernel: f.kernel.value, blockSize: Number(f.blockSize.value), offset: Number(f.offset.value), length: Number(f.length.value) });
  if (!r) return;
  bufFrames = r.frames;
  bufStepper.reset(bufFrames.length);
  shown();
}

// --- the bh LRU -------------------------------------------------------
let lruRun = null;
const lruStepper = stepper("lru", "lru-step", "lru-pos", (i) => {
  const s = lruRun.steps[i];
  $("#lru-call").textContent = s.call;
  const v = $("#lru-verdict");
  const isInval = s.call.startsWith("invalidate");
  v.textContent = isInval ? "INVALIDATE" : s.hit ? "HIT" : "MISS";
  v.className = "verdict " + (isInval ? "" : s.hit ? "hit" : "miss");
  $("#lru-outcome").textContent = s.outcome;
  const slots = [];
  for (let j = 0; j < lruRun.size; j++) {
    const x = (s.slots || [])[j];
    slots.push(el("li", { class: x ? (j === 0 ? "front" : "") : "empty" }, el("span", { class: "i", text: "slot " + j }),
      x ? "block " + x.block + " (" + sizeName(x.size) + ")" : "empty"));
  }
  $("#lru-slots").replaceChildren(...slots);
  $("#lru-counts").textContent = "slots scanned " + s.scanned + ", swap-cascade steps " + s.steps + ", buffers pushed out " + s.evicted +
    " (kernel " + lruRun.kernel + ", " + lruRun.size + " slots, block size " + lruRun.blockSize + ")";
});
async function runLRU() {
  const f = $("#lru-form");
  const r = await call("lru", { kernel: f.kernel.value, ops: f.ops.value });
  if (!r) return;
  lruRun = r;
  lruStepper.reset(r.steps.length);
  shown();
}

// --- step and quiz ----------------------------------------------------
let stepRun = null, revealed = false;
const reveal = $("#quiz-reveal");
function drawStep(i) {
  const b = stepRun.blocks[i];
  const quiz = !!b.answers;
  reveal.hidden = !quiz;
  reveal.setAttribute("aria-pressed", revealed);
  reveal.textContent = revealed ? "Hide answers" : "Reveal answers";
  $("#step-text").textContent = quiz && revealed ? b.answers : b.text;
  const parts = [];
  for (const p of b.pages || []) {
    const ring = el("div", { class: "ring", role: "list", "aria-label": p.line });
    for (const bh of p.buffers || []) {
      const cls = ["bh", bh.letters[1] === "D" ? "dirty" : "clean", bh.letters.includes("L") ? "locked" : ""].join(" ");
      ring.append(el("div", { class: cls, role: "listitem" }, el("div", { class: "nr", text: bh.block === "-" ? "unmapped" : "block " + bh.block }),
        el("div", { class: "letters", text: bh.letters })));
    }
    parts.push(el("h3", { text: p.line.split(";")[0] }), ring);
  }
  $("#step-draw").replaceChildren(...parts);
}
const stepStepper = stepper("step", "step-pos-range", "step-pos", (i) => { revealed = false; drawStep(i); });
reveal.addEventListener("click", () => { revealed = !revealed; drawStep(Number($("#step-pos-range").value)); });
async function runStep() {
  const f = $("#step-form");
  const r = await call("step", { seed: Number(f.seed.value), kernel: f.kernel.value, quiz: f.quiz.checked });
  if (!r) return;
  stepRun = r;
  $("#step-header").textContent = r.header;
  $("#step-command").textContent = r.command;
  stepStepper.reset(r.blocks.length);
  shown();
}

const views = {
  "tab-dd": { run: runDD },
  "tab-buffers": { run: runBuffers },
  "tab-lru": { run: runLRU },
  "tab-step": { run: runStep },
};

for (const [id, fn] of [["#dd-form", runDD], ["#buf-form", runBuffers], ["#lru-form", runLRU], ["#step-form", runStep]]) {
  $(id).addEventListener("submit", (e) => { e.preventDefault(); fn(); });
}

// --- start ------------------------------------------------------------
function setUp() {
  const p = JSON.parse(window.bhsim.call("presets", "")).result;
  const dd = $("#dd-form");
  fill(dd.machine, p.machines, "helios4");
  fill(dd.kernelA, p.kernels, "5.10.10");
  fill(dd.kernelB, p.kernels, "6.18");
  fill(dd.layout, p.layouts, "direct");
  for (const pr of p.profiles) dd.profile.append(el("option", { value: pr, text: pr }));
  const on = new Set(["512", "1024", "4096", "16384", "65536"]);
  for (const s of p.blockSizes) {
    const box = el("input", { type: "checkbox", name: "size", value: s });
    box.checked = on.has(s);
    $("#dd-sizes").append(el("label", {}, box, sizeName(s)));
  }
  fill($("#buf-form").kernel, p.kernels, "5.10.10");
  fill($("#buf-form").blockSize, p.blockSizes, "1024");
  fill($("#lru-form").kernel, p.kernels.filter((k) => k !== "6.4-nolru"), "6.4");
  $("#lru-form").ops.value = p.lruOps.split("; ").join("\n");
  fill($("#step-form").kernel, p.kernels, "6.18");
}

// The view to start on: the page's fragment (#dd, #buffers, #lru, #step),
// else the block-size view.
window.bhsimReady = () => {
  timings.loaded = performance.now() - timings.start;
  setUp();
  selectTab(document.getElementById("tab-" + location.hash.slice(1)) || tabs[0]);
};

if (!WebAssembly.instantiateStreaming) {
  WebAssembly.instantiateStreaming = async (resp, imports) => WebAssembly.instantiate(await (await resp).arrayBuffer(), imports);
}
const go = new Go();
WebAssembly.instantiateStreaming(fetch("bhsim.wasm"), go.importObject)
  .then((r) => go.run(r.instance))
  .catch((err) => say("The model did not load: " + err, true));
