// The review queue's keyboard and buttons. Reviews are POSTed as JSON to the API (the
// same rows as `auditor review add`); text from the server is only ever set with
// textContent, never parsed as HTML.
(function () {
  "use strict";
  var LABELS = ["supported", "contradicted", "not_supported", "stale", "unknown",
                "not_factual"];
  var STORE = "auditor.reviewer";
  var body = document.body;
  var run = body.dataset.run;
  var claims = Array.prototype.slice.call(document.querySelectorAll("article.claim"));
  var reviewer = document.getElementById("reviewer");
  var flash = document.getElementById("flash");
  var current = -1;

  try { reviewer.value = window.localStorage.getItem(STORE) || ""; } catch (e) { /* none */ }
  reviewer.addEventListener("input", function () {
    try { window.localStorage.setItem(STORE, reviewer.value.trim()); } catch (e) { /* none */ }
  });

  function say(text, bad) {
    flash.textContent = text;
    flash.className = bad ? "bad" : "ok";
  }

  function select(i, quiet) {
    if (!claims.length) { return; }
    i = Math.max(0, Math.min(claims.length - 1, i));
    if (current >= 0) { claims[current].classList.remove("current"); }
    current = i;
    var el = claims[i];
    el.classList.add("current");
    el.focus({ preventScroll: true });
    if (quiet) { return; }
    el.scrollIntoView({ block: "start" });
    // the address names the claim only once the reviewer has moved: a fragment set while
    // the page loads makes the browser scroll to it when loading ends (a page that opens
    // scrolled past its own header)
    if (window.history && window.history.replaceState) {
      window.history.replaceState(null, "", "#" + el.id);
    }
  }

  function next() {
    if (current < claims.length - 1) { select(current + 1); }
    else if (body.dataset.next) { window.location.href = body.dataset.next; }
    else { say("last claim of the queue"); }
  }

  function previous() {
    if (current > 0) { select(current - 1); }
    else if (body.dataset.prev) { window.location.href = body.dataset.prev + "#last"; }
    else { say("first claim of the queue"); }
  }

  function addAudit(el, audit) {
    var list = el.querySelector("ul.audits");
    if (list.querySelector('li[data-audit="' + String(Number(audit.id)) + '"]')) { return; }
    var li = document.createElement("li");
    li.className = "audit";
    li.dataset.audit = String(audit.id);
    var tag = document.createElement("span");
    tag.className = "label l-" + audit.label;
    tag.textContent = audit.label;
    var who = document.createElement("b");
    who.className = "who";
    who.textContent = audit.reviewer;
    var when = document.createElement("time");
    when.textContent = String(audit.created_at || "").slice(0, 19).replace("T", " ");
    li.appendChild(tag);
    li.appendChild(document.createTextNode(" by "));
    li.appendChild(who);
    li.appendChild(document.createTextNode(" at "));
    li.appendChild(when);
    if (audit.note) {
      var note = document.createElement("span");
      note.className = "audit-note";
      note.textContent = audit.note;
      li.appendChild(document.createTextNode(": "));
      li.appendChild(note);
    }
    list.appendChild(li);
  }

  function label(name) {
    var el = claims[current];
    if (!el) { return; }
    var who = reviewer.value.trim();
    if (!who) {
      say("type your name in the reviewer field first (it is remembered)", true);
      reviewer.focus();
      return;
    }
    var noteEl = el.querySelector("textarea.note");
    var note = noteEl.value.trim();
    var url = "/api/runs/" + encodeURIComponent(run) + "/claims/" +
      encodeURIComponent(el.dataset.claim) + "/audits";
    say("saving " + name + " ...");
    fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "Accept": "application/json" },
      body: JSON.stringify({ label: name, reviewer: who, note: note || null })
    }).then(function (res) {
      return res.json().then(function (data) { return { ok: res.ok, status: res.status, data: data }; },
                             function () { return { ok: false, status: res.status, data: null }; });
    }).then(function (r) {
      if (!r.ok) {
        var err = (r.data && r.data.error) || {};
        say("not saved (" + r.status + "): " + (err.field ? err.field + ": " : "") +
            (err.message || "error"), true);
        return;
      }
      addAudit(el, r.data);
      noteEl.value = "";
      el.classList.add("reviewed");
      el.querySelector(".done").textContent = "reviewed";
      say((r.data.added ? "saved: " : "already recorded: ") + name);
      if (el === claims[current] && current < claims.length - 1) { select(current + 1); }
    }, function (e) {
      say("could not save: " + e, true);
    });
  }

  document.addEventListener("keydown", function (ev) {
    var t = ev.target;
    var typing = t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" ||
                       t.tagName === "SELECT" || t.isContentEditable);
    if (typing) {
      if (ev.key === "Escape" || (ev.key === "Enter" && t === reviewer)) {
        ev.preventDefault();
        t.blur();
        select(current < 0 ? 0 : current);
      }
      return;
    }
    if (ev.ctrlKey || ev.metaKey || ev.altKey) { return; }
    if (ev.key === "j") { ev.preventDefault(); next(); }
    else if (ev.key === "k") { ev.preventDefault(); previous(); }
    else if (/^[1-6]$/.test(ev.key)) { ev.preventDefault(); label(LABELS[Number(ev.key) - 1]); }
    else if (ev.key === "n" && current >= 0) {
      ev.preventDefault();
      claims[current].querySelector("textarea.note").focus();
    }
  });

  document.addEventListener("click", function (ev) {
    var button = ev.target.closest ? ev.target.closest("button.label-button") : null;
    var card = ev.target.closest ? ev.target.closest("article.claim") : null;
    if (card) {
      var i = claims.indexOf(card);
      if (i !== current && !(ev.target.closest("textarea, a, summary, details"))) { select(i); }
      else if (i !== current) { if (current >= 0) { claims[current].classList.remove("current"); } current = i; card.classList.add("current"); }
    }
    if (button) { label(button.dataset.label); }
  });

  var start = 0;
  var hash = window.location.hash.slice(1);
  if (hash === "last") { start = claims.length - 1; }
  else {
    var wanted = hash.indexOf("claim-") === 0 ? hash.slice(6) : (body.dataset.focus || "");
    for (var i = 0; i < claims.length; i++) {
      if (wanted && claims[i].dataset.claim === wanted) { start = i; }
    }
  }
  // the first claim of a page is selected without scrolling past the page's header
  select(start, start === 0 && !hash);
})();
