"""Language identification: which language (FLORES-200 code) each line is written in."""
