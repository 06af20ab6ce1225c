"""Accounts: sign-up, log-in, log-out, password reset and deletion (django-allauth); an account's
player id and how a browser's guest seats move to it (docs/accounts.md)."""
