# The envgym env server (`envgym serve env`). Built offline, FROM a base image made from the host's own Python
# (envgym.sandbox.images); nothing is pulled. Build it with:  python -m envgym.server.images
ARG BASE=envgym-server-base:latest
FROM ${BASE}
# The tree as on disk: envgym/envs, envgym/sandbox and envgym/agents are links to the top-level folders.
COPY envgym /opt/envgym/envgym
COPY envs /opt/envgym/envs
COPY sandbox /opt/envgym/sandbox
COPY agents /opt/envgym/agents
ENV PYTHONPATH=/opt/envgym PYTHONUNBUFFERED=1
EXPOSE 8000
ENTRYPOINT ["python", "-m", "envgym", "serve", "env"]
CMD ["--host", "0.0.0.0", "--port", "8000"]
