"""Reference implementations of the graded exercises, one module per topic: what the cells after
an exercise run until the student's answer passes (``workbook.grading.use``), and the brute-force
checks the locked tests compare with. Never shown in a notebook; calling them is not an answer
(``grading.no_library_calls`` rejects it)."""
