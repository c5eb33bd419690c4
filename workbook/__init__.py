"""The course layer of the AICS Workbook: what the notebooks, the graders and the instructor's
tools share (not part of aicslib, the pocket TensorFlow the course studies)."""
