"""Web Push subscriptions: the server's public VAPID key, and each browser's subscription (made by
the page only after the player asked for notices on this device)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Request, Response, status
from pydantic import BaseModel, Field

from app.api.deps import CurrentAccount, DatabaseDep
from app.api.errors import responses
from app.api.schemas import RequestBody
from app.push import PushSender, endpoint_refusal, key_refusal, public_key_of, subscribe, unsubscribe

router = APIRouter(prefix="/api", tags=["push"])


class PushKey(BaseModel):
    public_key: str = Field(description="The VAPID public key (base64url), the browser's applicationServerKey.")


class SubscriptionKeys(RequestBody):
    p256dh: Annotated[str, Field(min_length=80, max_length=100, pattern=r"^[A-Za-z0-9_-]+={0,2}$")]
    auth: Annotated[str, Field(min_length=16, max_length=30, pattern=r"^[A-Za-z0-9_-]+={0,2}$")]


Endpoint = Annotated[str, Field(min_length=10, max_length=1024, pattern=r"^[\x21-\x7e]+$")]  # printable ASCII


class SubscriptionIn(RequestBody):
    """``PushSubscription.toJSON()`` of the browser, plus the page's language."""

    endpoint: Endpoint
    keys: SubscriptionKeys
    lang: Annotated[str, Field(pattern=r"^(en|ru|az|et|fi)$")] = "en"
    expirationTime: int | None = Field(default=None, ge=0, le=2**53)


class SubscriptionGone(RequestBody):
    endpoint: Endpoint


class Subscribed(BaseModel):
    id: int


def _sender(request: Request) -> PushSender:
    sender: PushSender | None = getattr(request.app.state, "push", None)
    if sender is None:
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, detail="unavailable: Web Push is not ready")
    return sender


def _invalid(field: str, message: str) -> HTTPException:
    return HTTPException(422, detail=[{"loc": ["body", *field.split(".")], "msg": message, "type": "value_error"}])


@router.get("/push/key", responses={200: {"description": "The server's VAPID public key."}, **responses(503)})
async def push_key(request: Request) -> PushKey:
    return PushKey(public_key=public_key_of(_sender(request).vapid))


@router.post(
    "/push/subscriptions",
    status_code=201,
    responses={
        201: {"description": "This browser gets your notices from now on."},
        **responses(400, 401, 403, 503),
        422: {"description": "Not a push service this server sends to, or bad keys."},
    },
)
async def add_subscription(body: SubscriptionIn, request: Request, user: CurrentAccount, db: DatabaseDep) -> Subscribed:
    sender = _sender(request)
    settings = request.app.state.settings
    why = endpoint_refusal(body.endpoint, settings.push.push_hosts, settings.push.push_allow_http)
    if why is not None:
        raise _invalid("endpoint", why)
    why = key_refusal(body.keys.p256dh.rstrip("="), body.keys.auth.rstrip("="))
    if why is not None:
        raise _invalid("keys", why)
    assert user.account_id is not None
    account_id = user.account_id
    row = await db.write(
        lambda session: subscribe(
            session,
            account_id=account_id,
            endpoint=body.endpoint,
            p256dh=body.keys.p256dh.rstrip("="),
            auth=body.keys.auth.rstrip("="),
            lang=body.lang,
        )
    )
    sender.subscribed(account_id)
    return Subscribed(id=row.id)


@router.delete(
    "/push/subscriptions",
    status_code=204,
    responses={**responses(400, 401, 403, 404), 422: {"description": "A bad endpoint."}},
)
async def remove_subscription(body: SubscriptionGone, user: CurrentAccount, db: DatabaseDep) -> Response:
    assert user.account_id is not None
    account_id = user.account_id
    if not await db.write(lambda session: unsubscribe(session, account_id=account_id, endpoint=body.endpoint)):
        raise HTTPException(status.HTTP_404_NOT_FOUND, detail="no such subscription of yours")
    return Response(status_code=204)
