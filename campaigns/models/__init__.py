"""The data model, one module per job: campaigns (and their items and workers), the work
(assignments and annotations), records, LLM judges, background jobs.

Models hold data and invariants (constraints, indexes); business rules live in
campaigns/services and campaigns/selectors, the worker's hot path in campaigns/work.
"""
from .campaigns import Campaign, Item, Worker, new_token
from .jobs import BackgroundJob, ExportJob, ImportJob, JobStatus, StatisticsResult
from .judges import Judge, JudgeOutput, JudgeRun
from .qualification import Qualification, QualificationAnswer
from .records import AllocationChange, AnswerMigration, DeletionRecord
from .work import Annotation, Assignment, AssignmentItem, ItemTally

__all__ = ["AllocationChange", "AnswerMigration", "Annotation", "Assignment",
           "AssignmentItem", "BackgroundJob", "Campaign",
           "DeletionRecord", "ExportJob", "ImportJob", "Item", "ItemTally", "Judge",
           "JobStatus", "JudgeOutput", "JudgeRun", "Qualification", "QualificationAnswer",
           "StatisticsResult", "Worker", "new_token"]
