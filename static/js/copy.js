// Copy buttons: <button data-copy-target="#id"> copies the text of #id to the clipboard and says so.
(function () {
  "use strict";
  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text);
    }
    // Plain HTTP (the demo on 127.0.0.1 is a secure context, other hosts may not be): a hidden textarea.
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "absolute";
    area.style.left = "-9999px";
    document.body.appendChild(area);
    area.select();
    var ok = document.execCommand("copy");
    document.body.removeChild(area);
    return ok ? Promise.resolve() : Promise.reject(new Error("copy refused"));
  }
  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-copy-target]");
    if (!button) return;
    var source = document.querySelector(button.getAttribute("data-copy-target"));
    if (!source) return;
    var label = button.textContent;
    copyText(source.textContent).then(
      function () { button.textContent = "Copied"; button.setAttribute("data-copied", "true"); },
      function () { button.textContent = "Copy failed: select the text"; }
    );
    window.setTimeout(function () { button.textContent = label; }, 2000);
  });
})();
