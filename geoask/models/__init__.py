"""Language-model backends per agent role: providers, served, scripted and reference replay."""
