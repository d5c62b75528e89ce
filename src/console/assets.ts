import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";

/** A static file the console serves under /console/static/. */
export interface StaticAsset {
  readonly contentType: string;
  readonly body: Buffer;
}

/**
 * The browser side, written as plain script (no build chain): shows every `<time>` in the
 * viewer's time zone and draws the timeline charts with uPlot from the JSON block each chart names.
 * A chart marks itself `data-drawn="true"` once uPlot has drawn it.
 */
const CONSOLE_JS = String.raw`"use strict";
(function () {
  document.querySelectorAll("time[datetime]").forEach(function (el) {
    var d = new Date(el.getAttribute("datetime"));
    if (!isNaN(d.getTime())) el.textContent = el.dataset.day ? d.toLocaleDateString(undefined, { timeZone: "UTC" }) : d.toLocaleString();
  });
  var palette = ["#6a1b9a", "#ef6c00", "#00838f", "#5d4037", "#ad1457", "#283593"];
  document.querySelectorAll("[data-timeline]").forEach(function (el) {
    var source = document.getElementById(el.getAttribute("data-timeline"));
    if (!source || typeof uPlot === "undefined") return;
    var data = JSON.parse(source.textContent);
    var series = [{}, { label: "success rate, all versions (%)", stroke: "#2e7d32", width: 2, points: { show: true, size: 6 } }];
    var columns = [data.days, data.overall];
    data.perVersion.forEach(function (v, i) {
      series.push({ label: "v" + v.version + " (%)", stroke: palette[i % palette.length], dash: [6, 4], width: 1.5, points: { show: true, size: 4 } });
      columns.push(v.rates);
    });
    var markVersions = function (u) {
      var ctx = u.ctx;
      ctx.save();
      ctx.strokeStyle = "#1565c0";
      ctx.fillStyle = "#1565c0";
      ctx.lineWidth = 1;
      ctx.setLineDash([2, 3]);
      ctx.font = "11px sans-serif";
      data.versions.forEach(function (mark) {
        if (mark.at < u.scales.x.min || mark.at > u.scales.x.max) return;
        var x = Math.round(u.valToPos(mark.at, "x", true));
        ctx.beginPath();
        ctx.moveTo(x, u.bbox.top);
        ctx.lineTo(x, u.bbox.top + u.bbox.height);
        ctx.stroke();
        ctx.fillText("v" + mark.version, x + 3, u.bbox.top + 12);
      });
      ctx.restore();
    };
    new uPlot(
      {
        width: Math.max(320, Math.min(960, el.clientWidth || 800)),
        height: 260,
        series: series,
        // To the end of today, so a version committed today is marked too.
        scales: { x: { time: true, range: function () { return [data.days[0], data.days[data.days.length - 1] + 86400]; } }, y: { range: [0, 100] } },
        axes: [{}, { label: "success %" }],
        hooks: { draw: [markVersions] },
      },
      columns,
      el,
    );
    el.setAttribute("data-drawn", "true");
  });
})();
`;

const CONSOLE_CSS = `
body { font-family: system-ui, sans-serif; margin: 0; color: #222; background: #fff; }
header { background: #263238; color: #fff; padding: 8px 16px; display: flex; gap: 18px; align-items: center; }
header a { color: #fff; text-decoration: none; }
header a.current { text-decoration: underline; }
header .who { margin-left: auto; font-size: 13px; }
header form { display: inline; }
main { padding: 12px 16px; }
table { border-collapse: collapse; font-size: 13px; }
th, td { border-bottom: 1px solid #e0e0e0; padding: 4px 8px; text-align: left; vertical-align: middle; }
th { background: #f5f5f5; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
.status-active { color: #2e7d32; }
.status-degraded { color: #ef6c00; }
.status-deprecated, .status-retired, .status-deleted { color: #c62828; }
.warn { color: #ef6c00; }
.empty { color: #555; font-style: italic; }
.error { color: #c62828; font-weight: bold; }
.notice { background: #e8f5e9; padding: 6px 10px; }
form.filters { margin-bottom: 10px; display: flex; gap: 10px; align-items: end; flex-wrap: wrap; }
form.inline { display: inline; }
.diff { font-family: ui-monospace, monospace; font-size: 12px; white-space: pre; background: #fafafa; padding: 6px; overflow-x: auto; }
.diff span { display: block; min-height: 1em; }
.diff .add { background: #e8f5e9; color: #1b5e20; }
.diff .del { background: #ffebee; color: #b71c1c; }
.diff .hunk { color: #1565c0; }
.diff .file { color: #555; }
pre.code { font-size: 12px; background: #fafafa; padding: 6px; overflow-x: auto; }
.timeline { min-height: 270px; }
section { margin-bottom: 22px; }
.actions button { margin-right: 6px; }
`;

/** Loads the console's static files: its own script and style, and uPlot's build from its npm package. */
export async function loadAssets(): Promise<Map<string, StaticAsset>> {
  const require = createRequire(import.meta.url);
  const uplotDir = require.resolve("uplot/package.json").replace(/package\.json$/, "");
  return new Map<string, StaticAsset>([
    ["console.js", { contentType: "text/javascript; charset=utf-8", body: Buffer.from(CONSOLE_JS) }],
    ["console.css", { contentType: "text/css; charset=utf-8", body: Buffer.from(CONSOLE_CSS) }],
    ["uplot.js", { contentType: "text/javascript; charset=utf-8", body: await readFile(`${uplotDir}dist/uPlot.iife.min.js`) }],
    ["uplot.css", { contentType: "text/css; charset=utf-8", body: await readFile(`${uplotDir}dist/uPlot.min.css`) }],
  ]);
}
