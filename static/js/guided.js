// The guided request's operation picker: a choice fills the statement in place (keeping the reason typed so far)
// and fires the statement's "input" event, which re-runs the live preview. Without this script the choices are links.
document.addEventListener("click", (event) => {
  const link = event.target.closest("#guided-picker a[data-statement]");
  const statement = document.getElementById("id_statement");
  if (!link || !statement) return;
  event.preventDefault();
  statement.value = link.dataset.statement;
  statement.dispatchEvent(new Event("input", { bubbles: true }));
  for (const other of document.querySelectorAll("#guided-picker a[aria-current]")) other.removeAttribute("aria-current");
  link.setAttribute("aria-current", "true");
  history.replaceState(null, "", link.href);
  statement.focus();
});
