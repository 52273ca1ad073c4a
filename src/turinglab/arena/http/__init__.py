"""The HTTP pieces every page uses: session cookies, bounded request bodies, the new-records
limiter, security headers."""
