"""Column changes (ADD COLUMNS, REPLACE COLUMNS, CHANGE [COLUMN]): see :mod:`operations.planners.columns.planner`."""

from operations.planners.columns.flags import partition_flag_steps
from operations.planners.columns.planner import plan_column_change

__all__ = ("partition_flag_steps", "plan_column_change")
