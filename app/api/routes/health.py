from fastapi import APIRouter, HTTPException, Request
from pydantic import BaseModel

router = APIRouter(tags=["health"])


class Health(BaseModel):
    status: str


@router.get("/api/health", responses={200: {"description": "The server is up (liveness: 200 while it drains too)."}})
async def health() -> Health:
    return Health(status="ok")


@router.get(
    "/api/ready",
    responses={
        200: {"description": "The server takes new tables and connections (readiness)."},
        503: {"description": "`draining`: the server is stopping and hands its tables over."},
    },
)
async def ready(request: Request) -> Health:
    """Readiness, distinct from liveness (``/api/health``): it fails from the moment the server is
    told to stop (docs/operations.md, "Drain"), so a load balancer sends nothing new here."""
    if getattr(request.app.state, "draining", False):
        raise HTTPException(503, detail="draining: this server is stopping and hands its tables over")
    return Health(status="ok")
