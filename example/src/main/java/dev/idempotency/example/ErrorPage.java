package dev.idempotency.example;

import jakarta.servlet.RequestDispatcher;
import jakarta.servlet.annotation.WebServlet;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * The application's error page (WEB-INF/web.xml): whatever the server answers by itself with an error status (a
 * path outside {@code /api}, credentials the Basic mechanism refuses, a body or a method the container refuses before
 * JAX-RS sees it) is {@code application/problem+json} too, with the status and the headers already set
 * ({@code WWW-Authenticate}, {@code Allow}). Reached directly, it is a 404.
 */
@WebServlet("/error")
public class ErrorPage extends HttpServlet {

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
        Object code = request.getAttribute(RequestDispatcher.ERROR_STATUS_CODE);
        int status = code instanceof Integer i ? i : 404;
        response.setStatus(status);
        response.setContentType(Problems.MEDIA_TYPE);
        response.setCharacterEncoding(StandardCharsets.UTF_8.name());
        response.getWriter().write(Problems.forStatus(status));
    }
}
