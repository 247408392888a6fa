// Draws the report's charts with uPlot from the JSON in #wtd-data and marks
// the steps: a line at each step's start, its title (or number, where the
// title does not fit), every other step shaded (dashed and reddish for the second run of an overlay).
// A chart's marks (change points) are a dashed line and a ring around the
// point, red for a regression, green for an improvement.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("wtd-data").textContent);
  var palette = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];
  window.wtdCharts = [];

  // A plugin that draws over the plot with draw(u, ctx, top, height, px),
  // the canvas set for small text that starts where it is put.
  function overPlot(draw) {
    return {
      hooks: {
        draw: [function (u) {
          var ctx = u.ctx, px = window.devicePixelRatio || 1;
          ctx.save();
          ctx.font = (10 * px) + "px sans-serif";
          // uPlot leaves the canvas aligning text as its last axis did (to
          // the right, for the y axis): a title must start at its line.
          ctx.textAlign = "left";
          ctx.textBaseline = "alphabetic";
          draw(u, ctx, u.bbox.top, u.bbox.height, px);
          ctx.restore();
        }]
      }
    };
  }

  function stepsPlugin(bounds, runs) {
    return overPlot(function (u, ctx, top, h, px) {
      bounds.forEach(function (b, i) {
        var first = runs.indexOf(b.run) <= 0;
        var x0 = u.valToPos(b.start, "x", true), x1 = u.valToPos(b.end, "x", true);
        if (i % 2 === 0) {
          ctx.fillStyle = first ? "rgba(0,0,0,0.05)" : "rgba(200,0,0,0.05)";
          ctx.fillRect(x0, top, Math.max(1, x1 - x0), h);
        }
        ctx.strokeStyle = first ? "rgba(0,0,0,0.4)" : "rgba(180,0,0,0.4)";
        ctx.setLineDash(first ? [] : [4 * px, 4 * px]);
        ctx.beginPath();
        ctx.moveTo(x0, top);
        ctx.lineTo(x0, top + h);
        ctx.stroke();
        // The title when it fits before the step's end, else its number
        // (the steps table names it).
        var text = b.label;
        if (ctx.measureText(text).width > x1 - x0 - 6 * px) text = "#" + b.seq;
        if (ctx.measureText(text).width > x1 - x0 - 2 * px && b.end - b.start < 0.01 * (u.scales.x.max - u.scales.x.min)) return;
        ctx.fillStyle = first ? "#444" : "#a00";
        ctx.fillText(text, x0 + 3 * px, top + (11 + 11 * (i % 2)) * px);
      });
    });
  }

  // The marks of a chart: a dashed line across it at each mark's x, a ring
  // around its point, and its label at the top.
  function marksPlugin(marks) {
    var colours = { regression: "#bb0000", improvement: "#007700", change: "#aa6600" };
    return overPlot(function (u, ctx, top, h, px) {
      marks.forEach(function (m, i) {
        var colour = colours[m.kind] || colours.change, x = u.valToPos(m.x, "x", true);
        ctx.strokeStyle = colour;
        ctx.fillStyle = colour;
        ctx.lineWidth = 1.5 * px;
        ctx.setLineDash([4 * px, 3 * px]);
        ctx.beginPath();
        ctx.moveTo(x, top);
        ctx.lineTo(x, top + h);
        ctx.stroke();
        ctx.setLineDash([]);
        if (m.y != null) {
          ctx.lineWidth = 2.5 * px;
          ctx.beginPath();
          ctx.arc(x, u.valToPos(m.y, "y", true), 7 * px, 0, 2 * Math.PI);
          ctx.stroke();
        }
        ctx.fillText(m.label, x + 3 * px, top + (11 + 11 * (i % 2)) * px);
      });
    });
  }

  // A heatmap's cells: series k of run 0 counts, per second, the
  // operations in (heat[k], heat[k+1]] ms; the more, the darker (log of
  // the count, from pale blue to the first line colour).
  function heatPlugin(c) {
    var max = 0;
    c.runs[0].y.forEach(function (ys) { ys.forEach(function (v) { if (v > max) max = v; }); });
    return {
      hooks: {
        draw: [function (u) {
          var ctx = u.ctx, xs = u.data[0];
          ctx.save();
          ctx.beginPath();
          ctx.rect(u.bbox.left, u.bbox.top, u.bbox.width, u.bbox.height);
          ctx.clip();
          for (var k = 1; k < u.data.length; k++) {
            var y0 = u.valToPos(c.heat[k - 1], "y", true), y1 = u.valToPos(c.heat[k], "y", true);
            for (var i = 0; i < xs.length; i++) {
              var v = u.data[k][i];
              if (!(v > 0)) continue;
              var t = Math.log(1 + v) / Math.log(1 + max);
              var r = Math.round(222 + (31 - 222) * t), g = Math.round(235 + (119 - 235) * t), b = Math.round(247 + (180 - 247) * t);
              ctx.fillStyle = "rgb(" + r + "," + g + "," + b + ")";
              var x0 = u.valToPos(xs[i] - 0.5, "x", true), x1 = u.valToPos(xs[i] + 0.5, "x", true);
              ctx.fillRect(x0, y1, Math.max(1, x1 - x0), Math.max(1, y0 - y1));
            }
          }
          ctx.restore();
        }]
      }
    };
  }

  data.charts.forEach(function (c) {
    var el = document.getElementById("chart-" + c.id);
    if (c.heat) {
      var r0 = c.runs[0];
      var hseries = [{ label: "seconds" }];
      r0.labels.forEach(function (l) { hseries.push({ label: l, paths: function () { return null; }, points: { show: false } }); });
      var hu = new uPlot({
        width: Math.max(400, el.clientWidth || 900),
        height: 260,
        series: hseries,
        legend: { show: false },
        cursor: { sync: { key: "wtd" }, points: { show: false } },
        scales: { x: { time: false }, y: { distr: 3, log: 2, auto: false, range: [c.heat[0], c.heat[c.heat.length - 1]] } },
        axes: [{ label: "seconds since the run started" }, { label: "latency, " + c.unit, size: 70,
          values: function (u, vals) { return vals.map(function (v) { return v == null ? "" : v >= 1 ? String(Math.round(v)) : String(+v.toPrecision(2)); }); } }],
        plugins: [heatPlugin(c), stepsPlugin(c.bounds, data.runs)]
      }, [r0.x].concat(r0.y), el);
      hu.setScale("x", { min: 0, max: data.seconds });
      window.wtdCharts.push({ id: c.id, series: hu.series.length - 1, expected: c.series });
      return;
    }
    var tables = c.runs.map(function (r) { return [r.x].concat(r.y); });
    // In dates, a null is widened to the other runs' x values on either
    // side (uPlot's null expansion), so the gap spans from the run before
    // it to the run after, as its own line has them.
    var joined = tables.length === 1 ? tables[0] :
      uPlot.join(tables, c.xtime ? tables.map(function (t) { return t.map(function () { return 2; }); }) : undefined);
    // A chart with an x label (threads, trials, a knob's value) is not on
    // the time axis: the points marked, no steps, no shared cursor, on a
    // log scale when it says so. A series styled "points" is points alone
    // (a tune{} search's trials), "step" a stepped line (the best so far).
    // One in dates (xtime: runs' starts) leaves a gap where a value is
    // null, and its runs (hosts) are not dashed.
    var timed = !c.xlabel;
    var series = [{ label: timed ? "seconds" : c.xlabel }];
    var k = 0;
    var stepped = uPlot.paths.stepped({ align: 1 });
    c.runs.forEach(function (r, ri) {
      r.labels.forEach(function (l, li) {
        var colour = palette[k++ % palette.length], style = (r.styles || [])[li];
        if ((r.colours || [])[li]) colour = r.colours[li];
        var s = { label: l, stroke: colour, width: 1.5, dash: ri > 0 && !c.xtime ? [6, 3] : undefined,
          points: { show: !timed }, spanGaps: !timed && !c.xtime };
        if (style === "points") {
          s.paths = function () { return null; };
          s.points = { show: true, size: 8, fill: colour };
        } else if (style === "step") {
          s.paths = stepped;
          s.points = { show: false };
        }
        series.push(s);
      });
    });
    var opts = {
      width: Math.max(400, el.clientWidth || 900),
      height: 260,
      series: series,
      scales: { x: c.xtime ? { time: true } : c.xlog ? { time: false, distr: 3, log: 2 } : { time: false } },
      cursor: timed ? { sync: { key: "wtd" } } : {},
      axes: [c.xwhole ? { label: c.xlabel, incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500] } : { label: timed ? "seconds since the run started" : c.xlabel },
        { label: c.unit, size: 70 }],
      plugins: (timed ? [stepsPlugin(c.bounds, data.runs)] : []).concat(c.marks ? [marksPlugin(c.marks)] : [])
    };
    var u = new uPlot(opts, joined, el);
    // Every chart in time spans the whole run, so the steps line up across charts.
    if (timed) u.setScale("x", { min: 0, max: data.seconds });
    window.wtdCharts.push({ id: c.id, series: u.series.length - 1, expected: c.series });
  });
  // A table wider than the page scrolls sideways: say so above it, and
  // shade its right edge, where a hidden scroll bar would give no cue.
  function markWide() {
    document.querySelectorAll("pre, .scroll").forEach(function (el) {
      var wide = el.scrollWidth > el.clientWidth + 1;
      var note = el.previousElementSibling;
      var has = note && note.classList.contains("wide-note");
      el.classList.toggle("wide", wide);
      if (wide && !has) {
        note = document.createElement("p");
        note.className = "wide-note";
        note.textContent = "Wider than the page: scroll sideways for the rest \u2192";
        el.parentNode.insertBefore(note, el);
      } else if (!wide && has) {
        note.remove();
      }
    });
  }
  markWide();
  window.addEventListener("resize", markWide);
})();
