"""Stand-in for the nsa-vibe ``nsa`` package, used by the bundled demo trainer.

Pure standard-library Python: nothing here touches a GPU. The module and function
names mirror the real repository so that stack dumps and tracebacks from the demo
look like the real trainer's.
"""
