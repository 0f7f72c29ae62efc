"""The signed-in user's own account."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, Field

from app.api.deps import CurrentUser, OptionalUser, SessionDep, SessionInfo
from app.api.errors import responses
from app.api.schemas import MeOut
from app.db import accounts

router = APIRouter(prefix="/api", tags=["accounts"])


class SessionOut(BaseModel):
    user: MeOut | None = Field(description="Who is signed in; null for an anonymous visitor.")


async def _me_out(user: SessionInfo, session: SessionDep) -> MeOut:
    if user.account_id is None:
        return MeOut(id=None, name=user.name, kind="guest", balance=None, is_admin=False)
    view = await accounts.view(session, user.account_id)
    assert view is not None  # resolve_session already checked the account exists
    return MeOut(id=view.id, name=view.name, kind="account", balance=view.balance, is_admin=view.is_admin)


@router.get("/me", responses={200: {"description": "Who is signed in."}, **responses(401)})
async def me(user: CurrentUser, session: SessionDep) -> MeOut:
    return await _me_out(user, session)


@router.get("/session", responses={200: {"description": "Who is signed in, if anyone."}})
async def current_session(user: OptionalUser, session: SessionDep) -> SessionOut:
    """``/api/me`` for a page that does not know whether its visitor is signed in: 200 either way,
    so an anonymous page view logs no failed request in the browser's console."""
    return SessionOut(user=None if user is None else await _me_out(user, session))
