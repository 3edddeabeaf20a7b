"""Background jobs: one job (poll it), cancel, resume."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from operations.api.idempotency import IDEMPOTENCY_KEY_PARAMETER, idempotent
from operations.api.serializers import JobSerializer
from operations.api.views.base import OperationsAPIView, errors
from operations.selectors import get_job
from operations.services.jobs import job_cancel, job_resume

__all__ = ("JobCancelView", "JobDetailView", "JobResumeView")


class JobDetailView(OperationsAPIView):
    @extend_schema(
        tags=["jobs"],
        operation_id="jobs_retrieve",
        parameters=[OpenApiParameter("id", int, OpenApiParameter.PATH, description="Job number.")],
        responses={200: JobSerializer, **errors(401, 404, overrides={404: "not_found: no such job."})},
    )
    def get(self, request: Request, pk: int) -> Response:
        """A background job's state, progress (0–100; partitions, files and bytes done of total, throughput, ETA),
        message, log and the Spark driver's log tail; poll until done is true."""
        return Response(JobSerializer(get_job(pk), context=self.context()).data)


_JOB_ERRORS = errors(
    400,
    401,
    403,
    404,
    409,
    415,
    422,
    overrides={
        400: "invalid_parameter: a malformed Idempotency-Key.",
        403: "permission_denied: only an admin or the job's requester.",
        404: "not_found: no such job.",
        409: "invalid_state: the job is not in a state that allows it (details: job, state).",
    },
)


class JobCancelView(OperationsAPIView):
    @extend_schema(
        tags=["jobs"],
        operation_id="jobs_cancel",
        summary="Cancel a queued or running job, or discard a failed or errored one",
        parameters=[
            OpenApiParameter("id", int, OpenApiParameter.PATH, description="Job number."),
            IDEMPOTENCY_KEY_PARAMETER,
        ],
        request=None,
        responses={202: JobSerializer, **_JOB_ERRORS},
    )
    @idempotent
    def post(self, request: Request, pk: int) -> Response:
        """A queued job ends cancelled at once; a running one stops at its next safe point (a Spark driver is stopped
        and its staging removed; a merge stops between copy units; nothing is swapped or published), then ends
        cancelled: poll the job. Too late once its metastore transaction or publish started. Audited as
        cancel_job."""
        job = job_cancel(job=get_job(pk), user=request.user)
        return Response(JobSerializer(job, context=self.context()).data, status=202)


class JobResumeView(OperationsAPIView):
    @extend_schema(
        tags=["jobs"],
        operation_id="jobs_resume",
        summary="Queue a failed or errored job again (a Spark program skips the units it verified)",
        parameters=[
            OpenApiParameter("id", int, OpenApiParameter.PATH, description="Job number."),
            IDEMPOTENCY_KEY_PARAMETER,
        ],
        request=None,
        responses={202: JobSerializer, **_JOB_ERRORS},
    )
    @idempotent
    def post(self, request: Request, pk: int) -> Response:
        """The job is queued again with its verified units (completed); its program skips them. Audited as
        resume_job."""
        job = job_resume(job=get_job(pk), user=request.user)
        return Response(JobSerializer(job, context=self.context()).data, status=202)
