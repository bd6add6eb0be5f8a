/**
 * The session browser's stylesheet, served as /ui/app.css (no inline styles: the CSP allows 'self' only).
 * One column that reads at 390 px; the sessions table turns into cards below 720 px.
 */
export const STYLE = `
:root{--fg:#1d2330;--muted:#56607a;--line:#dfe3ea;--bg:#fff;--soft:#f5f6f9;--accent:#1f56b3;
  --warn:#8a4b00;--bad:#a3261f;--ok:#1f6b3f;--untrusted:#fff4e0;--untrusted-line:#c77800}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);
  background:var(--bg)}
a{color:var(--accent)}
:focus-visible{outline:3px solid #f0a400;outline-offset:2px}
.skip{position:absolute;left:-9999px;top:0}
.skip:focus{left:.5rem;top:.5rem;background:#fff;padding:.3rem .6rem;z-index:10}
.sr-only{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);
  white-space:nowrap}
header.top{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;
  justify-content:space-between;padding:.6rem 1rem;border-bottom:1px solid var(--line);
  background:var(--soft)}
header.top .brand{font-weight:700;text-decoration:none;color:var(--fg)}
header.top .who{color:var(--muted);font-size:14px}
main{max-width:1100px;margin:0 auto;padding:1rem}
h1{font-size:1.35rem;margin:.2rem 0 .6rem;overflow-wrap:anywhere}
h2{font-size:1.1rem;margin:1.4rem 0 .5rem;overflow-wrap:anywhere}
button,.button{font:inherit;font-size:14px;padding:.35rem .8rem;border:1px solid #9aa3b5;
  border-radius:5px;background:#fff;color:var(--fg);cursor:pointer}
button:disabled{opacity:.55;cursor:default}button[aria-busy=true]{opacity:.7;cursor:progress}
button.primary{background:var(--accent);border-color:var(--accent);color:#fff}
button.danger{background:var(--bad);border-color:var(--bad);color:#fff}
input,textarea{font:inherit;padding:.35rem .5rem;border:1px solid #9aa3b5;border-radius:5px;
  max-width:100%}
textarea{width:100%;min-height:4.5rem}
label{font-weight:600;font-size:14px}
.row{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}
.note{color:var(--muted);font-size:14px}
.msgbox:empty{display:none}
.msgbox{margin:.6rem 0;padding:.5rem .75rem;border-radius:5px;background:var(--soft);
  border-left:4px solid var(--accent)}
.msgbox.error{border-left-color:var(--bad);background:#fdf0ef}
#signin{max-width:30rem;margin:2rem auto;padding:1rem 1.2rem;border:1px solid var(--line);
  border-radius:8px}
#signin input{width:100%;margin:.3rem 0 .6rem}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:.4rem .5rem;border-bottom:1px solid var(--line);vertical-align:top;
  overflow-wrap:anywhere}
th{font-size:13px;color:var(--muted);font-weight:600}
td.num{text-align:right;white-space:nowrap}
.task a,a.task{font-weight:600;overflow-wrap:anywhere}
.sid{display:block;color:var(--muted);font:12px ui-monospace,monospace;overflow-wrap:anywhere}
.badge{display:inline-block;font-size:12px;line-height:1.4;padding:0 .4rem;border-radius:9px;
  margin:.1rem .25rem 0 0;border:1px solid var(--line);background:var(--soft);color:var(--fg)}
.badge.taint{background:var(--untrusted);border-color:var(--untrusted-line);color:#5c3700}
.badge.sandbox{background:#e8f2ff;border-color:#8fb3e8}
.badge.fresh{background:#e6f5ec;border-color:#7cbf95;color:var(--ok)}
tr.fresh{background:#f2faf5}
nav.pager{display:flex;gap:.75rem;align-items:center;margin:.8rem 0}
form[role=search]{margin:.2rem 0 1rem}
form[role=search] input{flex:1 1 14rem}
ol.results{padding-left:1.4rem}ol.results li{margin:.2rem 0 .9rem}
.snippet{margin:.2rem 0;color:#333b4d;overflow-wrap:anywhere}
mark{background:#ffe98a;color:inherit;padding:0 .1em}
mark.redacted{background:#2b2f3a;color:#fff;border-radius:3px;padding:0 .25em;
  font:12px ui-monospace,monospace}
dl.facts{display:grid;grid-template-columns:minmax(0,max-content) minmax(0,1fr);gap:.1rem .8rem;
  margin:.4rem 0;font-size:14px}
dl.facts dt{color:var(--muted);overflow-wrap:anywhere}dl.facts dd{margin:0;overflow-wrap:anywhere}
h2.sub{font-size:.95rem;margin:.6rem 0 .1rem}
dl.metadata dt code{color:var(--fg);overflow-wrap:anywhere}
ol.transcript{list-style:none;padding:0;margin:0}
li.msg{border:1px solid var(--line);border-left-width:5px;border-radius:6px;margin:.6rem 0;
  padding:.5rem .75rem;background:#fff;content-visibility:auto;contain-intrinsic-size:auto 90px}
li.msg.role-user{border-left-color:#1f56b3}li.msg.role-assistant{border-left-color:#1f6b3f}
li.msg.role-system{border-left-color:#6b7280;background:var(--soft)}
li.msg.role-tool{border-left-color:#7a4fb3}
li.msg.cap-marker{border-style:dashed;border-left-color:var(--warn);background:#fff8ec}
.msg-head{display:flex;gap:.6rem;align-items:baseline;font-size:13px;color:var(--muted);
  margin-bottom:.2rem}
.msg-head>*{min-width:0;overflow-wrap:anywhere}
.msg-head .role{font-weight:700;color:var(--fg);text-transform:capitalize}
.text{white-space:pre-wrap;overflow-wrap:anywhere;margin:0;
  font:14px/1.45 ui-monospace,SFMono-Regular,Menlo,monospace}
.untrusted{margin:.4rem 0;border:2px dashed var(--untrusted-line);background:var(--untrusted);
  border-radius:6px;padding:.3rem .6rem;white-space:normal}
.untrusted-label{font:600 12px system-ui,sans-serif;color:#5c3700;margin-bottom:.2rem}
.untrusted .text{white-space:pre-wrap}
.tool-call{margin:.4rem 0 .2rem;border:1px solid #c9bfe0;border-radius:6px;background:#faf8fe}
.tool-call>summary,.fold>summary,.reasoning>summary{cursor:pointer;padding:.25rem .5rem;
  font-size:13px;overflow-wrap:anywhere}
.tool-call pre{margin:0;padding:.3rem .6rem}
.tool-result{margin:.2rem .5rem .5rem 1.2rem;padding:.3rem .6rem;border-left:3px solid #7a4fb3;
  background:#fff}
.tool-result-head{font-size:12px;color:var(--muted);font-weight:600}
.fold,.reasoning{margin:.3rem 0;border:1px solid var(--line);border-radius:5px;
  background:var(--soft)}
.fold .text,.reasoning .text{padding:.3rem .6rem}
.cap{font-weight:600;color:var(--warn)}
.refs td{font-size:14px}.refs code{overflow-wrap:anywhere;font-size:13px}
ol.timeline{list-style:none;padding:0;border-left:2px solid var(--line);margin-left:.4rem}
ol.timeline li{position:relative;padding:.1rem 0 .7rem 1rem;font-size:14px;overflow-wrap:anywhere}
ol.timeline li::before{content:"";position:absolute;left:-6px;top:.55rem;width:10px;height:10px;
  border-radius:50%;background:var(--accent)}
.op{font-weight:700}.hot{color:var(--bad);font-weight:600}
.actions{display:grid;gap:.8rem;grid-template-columns:repeat(auto-fit,minmax(min(100%,22rem),1fr))}
.actions section{border:1px solid var(--line);border-radius:6px;padding:.5rem .8rem}
.actions h3{font-size:1rem;margin:.1rem 0 .4rem}
.preview-list{font-size:13px;max-height:14rem;overflow:auto;padding-left:1.3rem}
.toolbar{display:flex;flex-wrap:wrap;gap:.5rem;margin:.5rem 0}
@media (max-width:720px){
  main{padding:.6rem}
  table.sessions thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
  table.sessions,table.sessions tbody,table.sessions tr,table.sessions td{display:block;width:100%}
  table.sessions tr{border:1px solid var(--line);border-radius:6px;margin:.5rem 0;
    padding:.3rem .5rem}
  table.sessions td{border:0;padding:.1rem 0;text-align:left}
  table.sessions td:not(.task){display:inline-block;width:auto;margin-right:.9rem;font-size:14px}
  table.sessions td[data-label]::before{content:attr(data-label) ": ";color:var(--muted);
    font-size:13px}
  table.refs thead{display:none}table.refs tr,table.refs td{display:block}
}
`;
