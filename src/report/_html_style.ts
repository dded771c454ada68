// The HTML report's styles, inlined in the page and allowed by their hash.
// Light by default, dark under `prefers-color-scheme: dark`.

/** The page's style sheet. */
export const STYLE = `
:root{--bg:#fff;--fg:#1b1f24;--muted:#59636e;--line:#d1d9e0;--panel:#f6f8fa;--accent:#0a58ca;
--pass:#1a7f37;--fail:#c62828;--warn:#9a6700;--bar:#4c8ed9;--band:#c9dcf2;--focus:#0a58ca;
--row:28px;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",sans-serif;color-scheme:light}
@media (prefers-color-scheme:dark){:root{--bg:#0f1216;--fg:#e6edf3;--muted:#9aa6b2;--line:#30363d;
--panel:#161b22;--accent:#6cb6ff;--pass:#56d364;--fail:#ff7b72;--warn:#e3b341;--bar:#539bf5;
--band:#24405f;--focus:#6cb6ff;color-scheme:dark}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg)}
header,main>section{padding:12px 20px}
h1{font-size:20px;margin:0}h2{font-size:16px;margin:18px 0 8px}h3{font-size:14px;margin:12px 0 6px}
.muted{color:var(--muted)}
.wrap{overflow-x:auto;max-width:100%}
table.t{border-collapse:collapse;min-width:100%}
table.t th,table.t td{border-bottom:1px solid var(--line);padding:4px 8px;text-align:left;white-space:nowrap}
table.t td.n,table.t th.n{text-align:right;font-variant-numeric:tabular-nums}
.pass{color:var(--pass)}.fail{color:var(--fail)}.warn{color:var(--warn)}
.badge{display:inline-block;padding:0 6px;border-radius:8px;border:1px solid currentColor;font-size:12px}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:0}
dl.facts.run{grid-template-columns:repeat(auto-fill,minmax(90px,max-content) minmax(220px,1fr))}
dl.facts dt{color:var(--muted)}dl.facts dd{margin:0;overflow-wrap:anywhere}
.charts{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start}
.chart{background:var(--panel);border:1px solid var(--line);border-radius:6px;padding:8px}
.chart svg{display:block}
svg .bar{fill:var(--bar)}svg .band{fill:var(--band)}svg .axis{stroke:var(--muted)}
svg .ci{stroke:var(--fg);stroke-width:2}svg .dot{fill:var(--fg)}svg text{fill:var(--muted);font-size:11px}
svg .zero{stroke:var(--muted);stroke-dasharray:3 3}
.controls{display:flex;flex-wrap:wrap;gap:8px;align-items:center;margin-bottom:8px}
.controls label{display:flex;gap:4px;align-items:center}
input,select,button{font:inherit;color:inherit;background:var(--bg);border:1px solid var(--line);border-radius:4px;padding:3px 6px}
button{cursor:pointer}
:focus-visible{outline:2px solid var(--focus);outline-offset:1px}
.grid{border:1px solid var(--line);border-radius:6px;height:min(60vh,560px);overflow:auto;position:relative}
.grid:focus-visible{outline:2px solid var(--focus)}
.gh,.gr{display:grid;grid-template-columns:var(--cols);min-width:var(--width);align-items:center}
.gh{position:sticky;top:0;z-index:1;background:var(--panel);border-bottom:1px solid var(--line)}
.gh button{border:0;background:none;text-align:left;padding:4px 8px;width:100%;font-weight:600}
.gb{position:relative;min-width:var(--width)}
.gr{position:absolute;left:0;right:0;height:var(--row);border-bottom:1px solid var(--line);cursor:pointer}
.gr>span{padding:0 8px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;unicode-bidi:isolate}
.gr:hover{background:var(--panel)}.gr.cur{background:var(--band)}
.gr .n{text-align:right;font-variant-numeric:tabular-nums}
#detail{position:fixed;top:0;right:0;bottom:0;width:min(760px,100vw);background:var(--bg);border-left:1px solid var(--line);
overflow:auto;padding:12px 20px;box-shadow:0 0 24px rgba(0,0,0,.25);z-index:5}
#detail[hidden]{display:none}
.dh{display:flex;justify-content:space-between;gap:8px;align-items:flex-start}
.dh h2{margin:4px 0;overflow-wrap:anywhere;unicode-bidi:isolate}
.side{display:grid;grid-template-columns:repeat(var(--sides,1),minmax(0,1fr));gap:12px}
pre.v{white-space:pre-wrap;overflow-wrap:anywhere;background:var(--panel);border:1px solid var(--line);border-radius:4px;
padding:6px 8px;margin:0 0 8px;max-height:40vh;overflow:auto;unicode-bidi:isolate;font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.score{border:1px solid var(--line);border-radius:4px;padding:6px 8px;margin:0 0 8px}
.score p{margin:2px 0;overflow-wrap:anywhere;unicode-bidi:isolate}
.score ul{margin:2px 0;padding-left:18px}
.esc{color:var(--warn)}
@media (max-width:700px){header,main>section{padding:10px 12px}#detail{padding:10px 12px}
.side{grid-template-columns:minmax(0,1fr)}.grid{height:65vh}}
`;
