"""The console's own records of changes made to metastores."""

from operations.models.executions import DirectoryMoveRecord, Execution

__all__ = ("DirectoryMoveRecord", "Execution")
