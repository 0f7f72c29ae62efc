"""The signed-in user's own account."""

from __future__ import annotations

from fastapi import APIRouter

from app.api.deps import CurrentUser, SessionDep
from app.api.errors import responses
from app.api.schemas import MeOut
from app.db import accounts

router = APIRouter(prefix="/api", tags=["accounts"])


@router.get("/me", responses={200: {"description": "Who is signed in."}, **responses(401)})
async def me(user: CurrentUser, session: SessionDep) -> MeOut:
    if user.account_id is None:
        return MeOut(id=None, name=user.name, kind="guest", balance=None, is_admin=False)
    view = await accounts.view(session, user.account_id)
    assert view is not None  # resolve_session already checked the account exists
    return MeOut(id=view.id, name=view.name, kind="account", balance=view.balance, is_admin=view.is_admin)
