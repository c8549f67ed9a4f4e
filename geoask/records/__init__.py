"""What a run leaves behind: the artifact folder and registry, the execution log, the run page."""
