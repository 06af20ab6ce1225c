"""URL configuration: the game app's pages, the admin (and its task queues' pages), the accounts'
pages (``accounts/``), and the languages: the language picker's ``set_language`` (``i18n/setlang/``)
and the scripts' translations (``jsi18n/<language>/<version>/``, Django's JavaScript catalog, loaded
by every page as an external script and cached by browsers: :class:`game.i18n.ScriptCatalog`).

The admin has no log-in form of its own: allauth's ``secure_admin_login`` sends it to the site's
log-in page, so its wrong passwords are counted and limited as every other (``docs/accounts.md``)."""

from allauth.account.decorators import secure_admin_login
from django.contrib import admin
from django.urls import include, path

from game.i18n import ScriptCatalog

admin.site.login = secure_admin_login(admin.site.login)  # type: ignore[method-assign]

urlpatterns = [
    # The task queues' pages (django-rq's; staff only), within the admin's addresses.
    path("admin/rq/", include("django_rq.urls")),
    path("admin/", admin.site.urls),
    path("accounts/", include("game.accounts.urls")),
    path("i18n/", include("django.conf.urls.i18n")),
    path("jsi18n/<str:language>/<str:version>/", ScriptCatalog.as_view(), name="javascript-catalog"),
    path("", include("game.urls")),
    # The turn mails' unsubscribe page and the notification settings (game/correspondence).
    path("", include("game.correspondence.urls")),
]
