// An exercise's solution is a notebook cell tagged "solution": fold it until the reader asks for it.
document.querySelectorAll(".celltag_solution").forEach(function (cell) {
  var fold = document.createElement("details");
  fold.className = "solution";
  var summary = document.createElement("summary");
  summary.textContent = "Show the solution (it runs with the notebook, so it is checked)";
  fold.appendChild(summary);
  cell.parentNode.insertBefore(fold, cell);
  fold.appendChild(cell);
});
