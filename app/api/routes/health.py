from fastapi import APIRouter
from pydantic import BaseModel

router = APIRouter(tags=["health"])


class Health(BaseModel):
    status: str


@router.get("/api/health", responses={200: {"description": "The server is up."}})
async def health() -> Health:
    return Health(status="ok")
